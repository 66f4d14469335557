import { approvalRequestEmail, deadlineText, reviewNoticeEmail } from '../../../domain/flow/approval-emails';
import type { ObjectSchema } from '../../../domain/flow/gate.types';
import { summaryLine } from '../../../domain/flow/review-summary';

describe('the approval e-mail says what is to be decided', () => {
  const schema: ObjectSchema = {
    type: 'object',
    properties: {
      items: { type: 'array', title: 'Invoice lines', items: { type: 'object', properties: {} } },
      note: { type: 'string' },
      customer: { type: 'string', required: true, title: 'Customer name' },
      invoiceNumber: { type: 'string' },
    },
  };

  it('names fields as the schema does (title, else the key in words): required first, lists last', () => {
    const line = summaryLine({ items: [1, 2, 3], note: 'a\n  b', customer: 'Ada', invoiceNumber: 'INV-1', extra_field: true }, schema);
    expect(line).toBe('Customer name: Ada · Note: a b · Invoice number: INV-1 · Extra field: true');
    expect(summaryLine({ items: [1, 2] }, schema)).toBe('Invoice lines: 2');
  });

  it('skips objects and empty values, clips long ones, and reads a freetext payload as text', () => {
    expect(summaryLine({ address: { city: 'London' }, note: '' }, null)).toBe('');
    expect(summaryLine({ note: 'x'.repeat(100) }, null)).toBe(`Note: ${'x'.repeat(59)}…`);
    expect(summaryLine('Dear  Ada,\nthe invoice', null)).toBe('Dear Ada, the invoice');
    expect(summaryLine(null, null)).toBe('');
  });

  it('writes the gate, the run, the summary and the deadline in UTC; the notice links each run', () => {
    const expiresAt = new Date('2026-11-29T14:05:00Z');
    expect(deadlineText(expiresAt)).toBe('29 Nov 2026, 14:05 UTC');
    const mail = approvalRequestEmail({ kind: 'request', to: { email: 'a@example.com', name: null }, gateName: 'Invoices', runShortId: 'frun_1', summary: 'Customer name: Ada', link: 'https://f.example/review?token=t', expiresAt });
    expect(mail.text).toContain('"Invoices" (run frun_1)');
    expect(mail.text).toContain('Summary: Customer name: Ada');
    expect(mail.text).toContain('Decide by 29 Nov 2026, 14:05 UTC.');
    expect(mail.html).toContain('href="https://f.example/review?token=t"');
    const runs = [{ gateName: 'Invoices', runShortId: 'frun_1', runId: 'r-1', enteredAt: expiresAt }];
    const notice = reviewNoticeEmail({ email: 'o@example.com', name: 'Owner' }, runs, 'https://f.example');
    expect(notice.text).toContain('https://f.example/flow/runs/r-1');
    expect(notice.html).toContain('href="https://f.example/flow/runs/r-1"');
    const digest = reviewNoticeEmail({ email: 'o@example.com', name: 'Owner' }, [...runs, { ...runs[0], runId: 'r-2', runShortId: 'frun_2' }], 'https://f.example');
    expect(digest.text).toContain('https://f.example/flow/runs/r-2');
  });
});
