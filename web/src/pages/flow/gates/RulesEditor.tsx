import { ActionIcon, Alert, Button, Group, Input, Paper, Stack, Text, TextInput } from '@mantine/core';
import { CodeEditor } from './CodeEditor';
import type { BusinessRule, Problem } from './model';

/**
 * Business rules (docs/flow.md "Business rules"): each an id, a name for the test step, a JSONata
 * expression that must yield `true`, and the message a failure reports. The expression editor
 * completes the schema's field paths and JSONata's `$functions`; the API checks each expression
 * when the gate is saved, and its problems are shown on the rule they name.
 */
export function RulesEditor({ rules, onChange, readOnly, fieldPaths, problems, freetext }: { rules: BusinessRule[]; onChange: (next: BusinessRule[]) => void; readOnly: boolean; fieldPaths: string[]; problems: Problem[]; freetext: boolean }) {
  const set = (i: number, patch: Partial<BusinessRule>) => onChange(rules.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  const move = (i: number, by: number) => {
    const next = [...rules];
    const [rule] = next.splice(i, 1);
    next.splice(i + by, 0, rule);
    onChange(next);
  };
  const paths = freetext ? ['text', 'length', 'lines', 'words'] : fieldPaths;
  return (
    <Stack gap="sm">
      <Text size="sm" c="dimmed">
        {freetext
          ? 'Each rule is a JSONata expression over text, length, lines and words; it passes only when it yields true.'
          : 'Each rule is a JSONata expression over the payload; it passes only when it yields true. Rules run once the schema passed.'}
      </Text>
      {rules.length === 0 && (
        <Text size="sm" c="dimmed">
          No rules yet.
        </Text>
      )}
      {rules.map((rule, i) => {
        const label = `Rule ${i + 1}`;
        const mine = problems.filter((p) => p.field === `businessRules[${i}]` || p.field.startsWith(`businessRules[${i}].`));
        return (
          <Paper key={i} withBorder p="sm" role="group" aria-label={`${label}: ${rule.id}`}>
            <Stack gap={6}>
              <Group gap="xs" align="flex-start">
                <TextInput label="Id" aria-label={`${label} id`} description="Letters, digits, . - _" w={180} maxLength={64} value={rule.id} readOnly={readOnly} onChange={(e) => set(i, { id: e.currentTarget.value })} />
                <TextInput
                  label="Name"
                  aria-label={`${label} name`}
                  description="The test step's name (default the id)"
                  flex={1}
                  miw={180}
                  maxLength={255}
                  value={rule.name ?? ''}
                  readOnly={readOnly}
                  onChange={(e) => {
                    const name = e.currentTarget.value;
                    const { name: _old, ...rest } = rule;
                    onChange(rules.map((r, j) => (j === i ? (name ? { ...rest, name } : rest) : r)));
                  }}
                />
                {!readOnly && (
                  <Group gap={4} mt={44}>
                    <ActionIcon variant="subtle" aria-label={`Move ${label} up`} disabled={i === 0} onClick={() => move(i, -1)}>
                      ↑
                    </ActionIcon>
                    <ActionIcon variant="subtle" aria-label={`Move ${label} down`} disabled={i === rules.length - 1} onClick={() => move(i, 1)}>
                      ↓
                    </ActionIcon>
                    <Button size="compact-xs" variant="subtle" color="red" aria-label={`Remove ${label}`} onClick={() => onChange(rules.filter((_, j) => j !== i))}>
                      Remove
                    </Button>
                  </Group>
                )}
              </Group>
              <Input.Wrapper label="Expression" labelElement="div" description="JSONata; type $ for functions, Ctrl+Space for fields">
                <CodeEditor label={`${label} expression`} language="jsonata" text={rule.expression} onText={(expression) => set(i, { expression })} readOnly={readOnly} fieldPaths={paths} placeholder="total > 0" />
              </Input.Wrapper>
              <TextInput label="Message" aria-label={`${label} message`} description="What a failure reports" maxLength={500} value={rule.message} readOnly={readOnly} onChange={(e) => set(i, { message: e.currentTarget.value })} />
              {mine.length > 0 && (
                <Alert color="red" role="alert" p="xs">
                  {mine.map((p) => (
                    <Text key={`${p.field}${p.message}`} size="sm">
                      {p.field}: {p.message}
                    </Text>
                  ))}
                </Alert>
              )}
            </Stack>
          </Paper>
        );
      })}
      {!readOnly && rules.length < 20 && (
        <Group>
          <Button size="xs" variant="light" onClick={() => onChange([...rules, { id: freshRuleId(rules), expression: '', message: '' }])}>
            Add a rule
          </Button>
        </Group>
      )}
    </Stack>
  );
}

function freshRuleId(rules: BusinessRule[]): string {
  for (let i = rules.length + 1; ; i++) if (!rules.some((r) => r.id === `rule-${i}`)) return `rule-${i}`;
}
