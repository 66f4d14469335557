import { Route, Routes } from 'react-router';
import { RunDetail } from './RunDetail';
import { RunsList } from './RunsList';

/** Flow's runs: the list (`/flow/runs`) and one run (`/flow/runs/:id`). */
export default function RunsArea() {
  return (
    <Routes>
      <Route index element={<RunsList />} />
      <Route path=":id" element={<RunDetail />} />
    </Routes>
  );
}
