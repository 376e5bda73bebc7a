import { describe, expect, it } from 'vitest';
import { parseFileConfig } from '../src/background/config';
import { popupView } from '../src/popup/view';

describe('parseFileConfig (tether.json)', () => {
  it('takes port and label when well-formed', () => {
    expect(parseFileConfig({ port: 12345, label: ' Tether browser ' })).toEqual({ port: 12345, label: 'Tether browser' });
  });
  it('ignores missing or malformed fields', () => {
    expect(parseFileConfig({})).toEqual({});
    expect(parseFileConfig({ port: '12345', label: '' })).toEqual({});
    expect(parseFileConfig({ port: 70000 })).toEqual({});
    expect(parseFileConfig(null)).toEqual({});
  });
  it('keeps a pairing key of 64 lowercase hex digits and drops anything else', () => {
    const key = '0123456789abcdef'.repeat(4);
    expect(parseFileConfig({ port: 47615, pairingKey: key })).toEqual({ port: 47615, pairingKey: key });
    for (const bad of [key.toUpperCase(), key.slice(1), `${key}0`, `${key.slice(0, 63)}g`, ` ${key}`, '', 42, null, { key }]) {
      expect(parseFileConfig({ pairingKey: bad }), String(bad)).toEqual({});
    }
  });
});

describe('popupView', () => {
  it('shows the daemon version, assigned label and slug when connected', () => {
    const v = popupView({ state: 'connected', port: 47615, since: 0 }, { assignedLabel: 'Work', assignedSlug: 'work', daemonVersion: '0.3.0' });
    expect(v).toMatchObject({ state: 'connected', headline: 'Connected to Tether', version: 'Tether 0.3.0', label: 'Work', slug: 'work', halted: false });
  });
  it('shows the last refusal', () => {
    const v = popupView(
      { state: 'disconnected', port: 1, since: 0, lastRefusal: { code: 'protocol_mismatch', message: 'Reload the extension.', at: 0 } },
      {},
    );
    expect(v.headline).toBe('Tether refused this browser');
    expect(v.refusal).toBe('Reload the extension.');
  });
});
