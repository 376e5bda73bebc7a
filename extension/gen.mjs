// Generates src/protocol.gen.ts from src/protocol.schema.json (itself generated
// from protocol/protocol.go): the wire types, and METHODS, the list of methods. Run with `npm run gen`; the test
// test/protocol-gen.test.ts fails when the checked-in file is stale.
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { compile } from 'json-schema-to-typescript';

export const schemaPath = fileURLToPath(new URL('./src/protocol.schema.json', import.meta.url));
export const outputPath = fileURLToPath(new URL('./src/protocol.gen.ts', import.meta.url));

const header = '// Code generated from protocol.schema.json by `npm run gen`; DO NOT EDIT.\n';

/** Compiles the protocol schema to the text of protocol.gen.ts. */
export async function generateProtocolTypes() {
  const schema = JSON.parse(await readFile(schemaPath, 'utf8'));
  const body = await compile(schema, 'TetherProtocol', {
    bannerComment: '',
    unreachableDefinitions: true,
    additionalProperties: false,
    strictIndexSignatures: true,
    format: true,
    cwd: fileURLToPath(new URL('./src/', import.meta.url)),
    style: { singleQuote: true, printWidth: 100 },
  });
  return header + '\n' + body.trimStart() + methodList(schema);
}

/**
 * The methods of Request.method, as a list the extension's contexts check
 * requests against (the offscreen document's allow-list; the service
 * worker's HANDLERS is typed by them).
 */
function methodList(schema) {
  const methods = schema.$defs.Request.properties.method.enum;
  const lines = methods.map((m) => `  ${JSON.stringify(m).replace(/^"|"$/g, "'")},`);
  return [
    '',
    "/** The methods the daemon may call (Request.method), in the protocol's order. */",
    "export const METHODS: readonly Request['method'][] = [",
    ...lines,
    '];',
    '',
  ].join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await writeFile(outputPath, await generateProtocolTypes());
  console.log(`wrote ${outputPath}`);
}
