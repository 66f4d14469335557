import { nextVersionNumber, parseVersionKey, restoreNotes } from '../../domain/versions';

describe('versioned resources (domain/versions.ts)', () => {
  it('reads a path version as a number of at most nine digits, never 0 or a leading zero', () => {
    expect(['1', '12', '999999999'].map((p) => parseVersionKey(p))).toEqual([{ number: 1 }, { number: 12 }, { number: 999999999 }]);
    expect(['0', '01', '1000000000', '-1', '1.5', '', 'latest', ' 1'].map((p) => parseVersionKey(p))).toEqual(Array(8).fill(null));
  });

  it('reads a UUID as a version id only where the resource allows ids, lower-cased', () => {
    const id = '0F8FAD5B-D9CB-469F-A165-70867728950E';
    expect(parseVersionKey(id)).toBeNull();
    expect(parseVersionKey(id, { ids: true })).toEqual({ id: id.toLowerCase() });
    expect(parseVersionKey('3', { ids: true })).toEqual({ number: 3 });
  });

  it('numbers versions 1, 2, 3… and names the restored version unless notes are given', () => {
    expect([0, 1, 41].map(nextVersionNumber)).toEqual([1, 2, 42]);
    expect([restoreNotes(undefined, 2), restoreNotes(null, 2), restoreNotes('', 2), restoreNotes('Back to v2', 2)]).toEqual([
      'Restored from version 2',
      'Restored from version 2',
      'Restored from version 2',
      'Back to v2',
    ]);
  });
});
