import { ConfigError, loadConfig } from '../../domain/config';

/** The metrics variables (docs/operations.md "Metrics"): off by default, loopback by default, bad values named. */
describe('metrics configuration', () => {
  it('serves no metrics unless METRICS_PORT is set, and binds to loopback by default', () => {
    expect(loadConfig({}).metrics).toEqual({ port: undefined, host: '127.0.0.1', token: undefined, temporalBind: undefined });
    expect(loadConfig({ METRICS_PORT: '9464', METRICS_HOST: '0.0.0.0', METRICS_TOKEN: 'a'.repeat(16), TEMPORAL_METRICS_BIND: '0.0.0.0:9465' }).metrics).toEqual({
      port: 9464,
      host: '0.0.0.0',
      token: 'a'.repeat(16),
      temporalBind: '0.0.0.0:9465',
    });
  });

  it.each([
    ['METRICS_PORT', '70000'],
    ['METRICS_PORT', 'metrics'],
    ['METRICS_TOKEN', 'short'],
    ['TEMPORAL_METRICS_BIND', '9465'],
    ['TEMPORAL_METRICS_BIND', 'http://0.0.0.0:9465/metrics'],
    ['TEMPORAL_METRICS_BIND', '0.0.0.0:9465 ; rm -rf /'],
  ])('refuses %s=%j with one line naming it', (variable, value) => {
    let error: unknown;
    try {
      loadConfig({ [variable]: value });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).variable).toBe(variable);
  });
});
