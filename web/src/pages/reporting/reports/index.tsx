import { Stack } from '@mantine/core';
import { Route, Routes } from 'react-router';
import { REPORTING_TABS, SectionTabs } from '../../SectionTabs';
import { ChannelsPage } from './Channels';
import { ImportsPage } from './Imports';
import { ReportEditor, ReportsPage } from './Reports';
import { RunDetail, RunsPage } from './Runs';
import { ScheduleEditor, SchedulesPage } from './Schedules';

/**
 * Reporting's reports, schedules (and jobs), runs, channels and imports (docs/web.md "Reporting:
 * reports, schedules, runs, channels and imports"): one chunk, each area with its own sub-routes.
 */
export default function ReportsArea({ area }: { area: 'reports' | 'schedules' | 'runs' | 'channels' | 'imports' }) {
  return (
    <Stack>
      <SectionTabs label="Reporting" tabs={REPORTING_TABS} />
      {area === 'reports' && (
        <Routes>
          <Route index element={<ReportsPage />} />
          <Route path="new" element={<ReportEditor />} />
          <Route path=":id" element={<ReportEditor />} />
        </Routes>
      )}
      {area === 'schedules' && (
        <Routes>
          <Route index element={<SchedulesPage />} />
          <Route path="new" element={<ScheduleEditor />} />
          <Route path=":id" element={<ScheduleEditor />} />
        </Routes>
      )}
      {area === 'runs' && (
        <Routes>
          <Route index element={<RunsPage />} />
          <Route path=":id" element={<RunDetail />} />
        </Routes>
      )}
      {area === 'channels' && <ChannelsPage />}
      {area === 'imports' && <ImportsPage />}
    </Stack>
  );
}
