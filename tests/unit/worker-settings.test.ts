import { ConfigError, loadConfig, mainActivitySlots } from '../../domain/config';

describe('worker settings: activity slots sized to the database pool, shutdown grace time', () => {
  it('gives the main queue one activity slot per database connection by default', () => {
    expect(mainActivitySlots(10)).toBe(10);
    expect(mainActivitySlots(1)).toBe(1);
    expect(loadConfig({}).temporal.mainActivitySlots).toBe(10);
    expect(loadConfig({ DATABASE_POOL_SIZE: '3' }).temporal.mainActivitySlots).toBe(3);
  });

  it('takes fewer slots than connections when asked', () => {
    expect(mainActivitySlots(10, 4)).toBe(4);
    expect(loadConfig({ DATABASE_POOL_SIZE: '8', WORKER_ACTIVITY_SLOTS: '8' }).temporal.mainActivitySlots).toBe(8);
  });

  it('refuses to start with more slots than the pool can serve, naming both variables', () => {
    expect(() => mainActivitySlots(5, 6)).toThrow(ConfigError);
    let err: unknown;
    try {
      loadConfig({ DATABASE_POOL_SIZE: '5', WORKER_ACTIVITY_SLOTS: '50' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).variable).toBe('WORKER_ACTIVITY_SLOTS');
    expect((err as Error).message).toMatch(/WORKER_ACTIVITY_SLOTS \(50\) must not exceed DATABASE_POOL_SIZE \(5\)/);
  });

  it('refuses slot counts that are not positive integers', () => {
    for (const bad of ['0', '-1', '2.5', 'many', '']) {
      expect(() => loadConfig({ WORKER_ACTIVITY_SLOTS: bad })).toThrow(/WORKER_ACTIVITY_SLOTS/);
    }
  });

  it('lets running activities finish for 30 s on shutdown by default; 0 cancels them at once', () => {
    expect(loadConfig({}).temporal.shutdownGraceSeconds).toBe(30);
    expect(loadConfig({ WORKER_SHUTDOWN_GRACE_SECONDS: '0' }).temporal.shutdownGraceSeconds).toBe(0);
    for (const bad of ['-1', '3601', '1.5', 'soon']) {
      expect(() => loadConfig({ WORKER_SHUTDOWN_GRACE_SECONDS: bad })).toThrow(/WORKER_SHUTDOWN_GRACE_SECONDS/);
    }
  });
});
