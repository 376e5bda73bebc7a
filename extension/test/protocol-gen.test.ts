// @vitest-environment node
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { generateProtocolTypes, outputPath, schemaPath } from '../gen.mjs';
import { PROTOCOL_VERSION } from '../src/shared/messages';
import { METHODS } from '../src/protocol.gen';
import { HANDLERS } from '../src/background/methods/handlers';

describe('protocol.gen.ts', () => {
  it('matches protocol.schema.json', async () => {
    const want: string = await generateProtocolTypes();
    const got = await readFile(outputPath as string, 'utf8');
    expect(got === want, 'src/protocol.gen.ts is stale: run `make generate`').toBe(true);
  });

  it('speaks the schema protocol version and methods', async () => {
    const schema = JSON.parse(await readFile(schemaPath as string, 'utf8'));
    expect(PROTOCOL_VERSION).toBe(schema['x-protocol-version']);
    expect([...METHODS].sort()).toEqual([...schema.$defs.Request.properties.method.enum].sort());
    expect(Object.keys(HANDLERS).sort()).toEqual([...METHODS].sort());
  });
});
