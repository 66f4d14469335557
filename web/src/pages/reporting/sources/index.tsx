import { Stack } from '@mantine/core';
import { Route, Routes } from 'react-router';
import { REPORTING_TABS, SectionTabs } from '../../SectionTabs';
import { DatasourcePage } from './DatasourceDetail';
import { DatasourcesPage } from './Datasources';
import { NewDatasourcePage } from './NewDatasource';
import { QueriesPage } from './Queries';
import { QueryEditorPage } from './QueryEditor';

/**
 * Reporting's datasources (with the project's agents) and queries (docs/web.md "Reporting: datasources
 * and queries"): a chunk of its own with the SQL editor, its routes under /reporting/datasources and
 * /reporting/queries.
 */
export default function SourcesArea({ area }: { area: 'datasources' | 'queries' }) {
  return (
    <Stack gap={0}>
      <SectionTabs label="Reporting" tabs={REPORTING_TABS} />
      {area === 'datasources' ? (
        <Routes>
          <Route index element={<DatasourcesPage />} />
          <Route path="new" element={<NewDatasourcePage />} />
          <Route path=":id" element={<DatasourcePage />} />
        </Routes>
      ) : (
        <Routes>
          <Route index element={<QueriesPage />} />
          {/* "new" too: the page stays mounted when a new query's first save moves it to its id. */}
          <Route path=":id" element={<QueryEditorPage />} />
        </Routes>
      )}
    </Stack>
  );
}
