import { Stack } from '@mantine/core';
import { Route, Routes } from 'react-router';
import { FLOW_TABS, SectionTabs } from '../../SectionTabs';
import { GateEditor, GatePage } from './GateEditor';
import { GateList } from './GateList';
import './gates.css';

/** Flow's gates (docs/web.md "Flow: gates"): the list, a new gate, and a gate's page. */
export default function GatesArea() {
  return (
    <Routes>
      <Route index element={<GateList />} />
      <Route
        path="new"
        element={
          <Stack>
            <SectionTabs label="Flow" tabs={FLOW_TABS} />
            <GateEditor />
          </Stack>
        }
      />
      <Route
        path=":id"
        element={
          <Stack>
            <SectionTabs label="Flow" tabs={FLOW_TABS} />
            <GatePage />
          </Stack>
        }
      />
    </Routes>
  );
}
