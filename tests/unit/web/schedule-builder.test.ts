import { builderOf, cronOf, DEFAULT_BUILDER } from '../../../web/src/pages/reporting/reports/cron';

/** The schedule form's builder (web/src/pages/reporting/reports/cron.ts): what each preset writes, and nothing while a time is half typed. */
describe('schedule builder', () => {
  it('writes each preset as the expression Temporal runs', () => {
    expect(cronOf({ ...DEFAULT_BUILDER, preset: 'daily', time: '07:30' })).toBe('30 7 * * *');
    expect(cronOf({ ...DEFAULT_BUILDER, preset: 'weekdays', time: '18:05' })).toBe('5 18 * * 1-5');
    expect(cronOf({ ...DEFAULT_BUILDER, preset: 'weekly', time: '09:00', dayOfWeek: 3 })).toBe('0 9 * * 3');
    expect(cronOf({ ...DEFAULT_BUILDER, preset: 'monthly', time: '06:15', dayOfMonth: 28 })).toBe('15 6 28 * *');
    expect(cronOf({ ...DEFAULT_BUILDER, preset: 'hourly', time: '', minute: 45 })).toBe('45 * * * *');
    expect(cronOf({ ...DEFAULT_BUILDER, preset: 'custom' })).toBeNull();
  });

  it('writes nothing while the time is being typed, so the last expression stands instead of midnight', () => {
    for (const time of ['', '7', '7:', '7:3', '07:3']) expect([time, cronOf({ ...DEFAULT_BUILDER, preset: 'daily', time })]).toEqual([time, null]);
    expect(cronOf({ ...DEFAULT_BUILDER, preset: 'daily', time: '7:30' })).toBe('30 7 * * *');
  });

  it('reads an expression back into its preset', () => {
    expect(builderOf('30 7 * * 1-5', DEFAULT_BUILDER)).toMatchObject({ preset: 'weekdays', time: '07:30' });
    expect(builderOf('0 9 * * MON', DEFAULT_BUILDER)).toMatchObject({ preset: 'weekly', dayOfWeek: 1 });
    expect(builderOf('*/5 * * * *', DEFAULT_BUILDER).preset).toBe('custom');
  });
});
