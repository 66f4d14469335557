import { ConfigError, loadConfig } from '../../../domain/config';

describe('users config fragment', () => {
  it('defaults to the spec: a 30-day grace period and 2 MB avatars', () => {
    const { users } = loadConfig({});
    expect(users).toEqual({ deletionGraceSeconds: 30 * 24 * 3600, avatarMaxBytes: 2 * 1024 * 1024 });
  });

  it('lets tests and operators shorten the grace period, and refuses nonsense', () => {
    expect(loadConfig({ ACCOUNT_DELETION_GRACE_SECONDS: '3', AVATAR_MAX_BYTES: '4096' }).users).toEqual({ deletionGraceSeconds: 3, avatarMaxBytes: 4096 });
    expect(() => loadConfig({ ACCOUNT_DELETION_GRACE_SECONDS: '0' })).toThrow(ConfigError);
    expect(() => loadConfig({ AVATAR_MAX_BYTES: 'big' })).toThrow(/AVATAR_MAX_BYTES/);
  });
});
