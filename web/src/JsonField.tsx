import { JsonInput } from '@mantine/core';
import { useState } from 'react';

/** A JSON value edited as text: applied when it parses, else the mistake is shown and nothing changes. */
export function JsonField({ label, value, onChange, readOnly, description, required }: { label: string; value: unknown; onChange: (v: unknown) => void; readOnly?: boolean; description?: string; required?: boolean }) {
  const shown = value === undefined ? '' : JSON.stringify(value, null, 2);
  const [text, setText] = useState(shown);
  const [error, setError] = useState<string>();
  const [last, setLast] = useState(shown);
  // Undo, redo or another field changed the value: show it (React's pattern for state from props).
  if (shown !== last) {
    setLast(shown);
    setText(shown);
    setError(undefined);
  }
  return (
    <JsonInput
      label={label}
      withAsterisk={required}
      description={description}
      value={text}
      readOnly={readOnly}
      autosize
      minRows={2}
      maxRows={12}
      error={error}
      onChange={(next) => {
        setText(next);
        if (!next.trim()) {
          setError(undefined);
          onChange(undefined);
          return;
        }
        try {
          const parsed: unknown = JSON.parse(next);
          setError(undefined);
          setLast(JSON.stringify(parsed, null, 2));
          onChange(parsed);
        } catch {
          setError('Not valid JSON yet: the last valid value is kept');
        }
      }}
    />
  );
}
