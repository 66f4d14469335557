import { Badge, Box, Group, Text, TextInput } from '@mantine/core';
import { useMemo, useRef, useState, type KeyboardEvent } from 'react';
import './sources.css';
import type { DiscoveredSchema } from './shared';

type Table = DiscoveredSchema['tables'][number];

interface Node {
  id: string;
  label: string;
  level: number;
  parent?: string;
  children?: Node[];
  /** What a click on a leaf hands to `onPick` (a column's name). */
  pick?: string;
  title: string;
  detail: string;
  badge?: string;
}

function nodesOf(tables: Table[]): Node[] {
  const bySchema = new Map<string, Table[]>();
  for (const t of tables) bySchema.set(t.schema, [...(bySchema.get(t.schema) ?? []), t]);
  return [...bySchema.entries()].map(([schema, list]) => {
    const schemaId = `s:${schema}`;
    return {
      id: schemaId,
      level: 1,
      title: schema,
      detail: `${list.length} ${list.length === 1 ? 'table' : 'tables'}`,
      label: `${schema}, schema, ${list.length} ${list.length === 1 ? 'table' : 'tables'}`,
      children: list.map((t) => {
        const tableId = `t:${schema}.${t.name}`;
        const columns = [...t.columns].sort((a, b) => a.ordinal - b.ordinal);
        return {
          id: tableId,
          parent: schemaId,
          level: 2,
          title: t.name,
          badge: t.type,
          detail: `${columns.length} ${columns.length === 1 ? 'column' : 'columns'}`,
          label: `${t.name}, ${t.type}, ${columns.length} ${columns.length === 1 ? 'column' : 'columns'}`,
          children: columns.map((c) => ({
            id: `c:${schema}.${t.name}.${c.name}`,
            parent: tableId,
            level: 3,
            title: c.name,
            detail: `${c.dataType}${c.nullable ? '' : ', not null'}`,
            label: `${c.name}, ${c.dataType}${c.nullable ? '' : ', not null'}`,
            pick: c.name,
          })),
        };
      }),
    };
  });
}

/**
 * The discovered schema as a tree (WAI-ARIA tree pattern): schemas, their tables and views, and each
 * one's columns with their types. One item is in the tab order; arrows move and open or close, Enter
 * and Space open or close (or pick a column when `onPick` is given), Home and End jump.
 */
export function SchemaTree({ schema, label, onPick }: { schema: DiscoveredSchema; label: string; onPick?: (text: string) => void }) {
  const [filter, setFilter] = useState('');
  const [open, setOpen] = useState<Set<string>>(() => new Set(schema.tables.length <= 40 ? [...new Set(schema.tables.map((t) => `s:${t.schema}`))] : []));
  const [active, setActive] = useState<string>();
  const tree = useRef<HTMLUListElement>(null);
  const needle = filter.trim().toLowerCase();
  const nodes = useMemo(() => nodesOf(needle ? schema.tables.filter((t) => t.name.toLowerCase().includes(needle)) : schema.tables), [schema, needle]);

  // The items a person can reach now: those whose parents are open, in order.
  const visible: Node[] = [];
  const walk = (list: Node[]) => {
    for (const n of list) {
      visible.push(n);
      if (n.children && (open.has(n.id) || needle)) walk(n.children);
    }
  };
  walk(nodes);
  const focusable = visible.find((n) => n.id === active)?.id ?? visible[0]?.id;
  const isOpen = (n: Node) => open.has(n.id) || (!!needle && n.level === 1);

  const toggle = (id: string, to?: boolean) =>
    setOpen((was) => {
      const next = new Set(was);
      if (to ?? !next.has(id)) next.add(id);
      else next.delete(id);
      return next;
    });
  const focus = (id: string | undefined) => {
    if (!id) return;
    setActive(id);
    tree.current?.querySelector<HTMLElement>(`[data-node="${CSS.escape(id)}"]`)?.focus();
  };
  const onKey = (event: KeyboardEvent, n: Node) => {
    const at = visible.findIndex((v) => v.id === n.id);
    const keys: Record<string, () => void> = {
      ArrowDown: () => focus(visible[at + 1]?.id),
      ArrowUp: () => focus(visible[at - 1]?.id),
      Home: () => focus(visible[0]?.id),
      End: () => focus(visible.at(-1)?.id),
      ArrowRight: () => {
        if (!n.children) return;
        if (!isOpen(n)) toggle(n.id, true);
        else focus(n.children[0]?.id);
      },
      ArrowLeft: () => {
        if (n.children && isOpen(n)) toggle(n.id, false);
        else focus(n.parent);
      },
      Enter: () => (n.children ? toggle(n.id) : n.pick && onPick?.(n.pick)),
      ' ': () => (n.children ? toggle(n.id) : n.pick && onPick?.(n.pick)),
    };
    const action = keys[event.key];
    if (!action) return;
    event.preventDefault();
    event.stopPropagation();
    action();
  };

  const item = (n: Node) => {
    const expanded = n.children ? isOpen(n) : undefined;
    return (
      <li
        key={n.id}
        role="treeitem"
        aria-label={n.label}
        aria-level={n.level}
        aria-expanded={expanded}
        data-node={n.id}
        tabIndex={n.id === focusable ? 0 : -1}
        onKeyDown={(e) => onKey(e, n)}
        onFocus={(e) => {
          if (e.target === e.currentTarget) setActive(n.id);
        }}
        onClick={(e) => {
          e.stopPropagation();
          setActive(n.id);
          if (n.children) toggle(n.id);
          else if (n.pick) onPick?.(n.pick);
        }}
      >
        <Box px={4} py={2} className="schema-tree-row">
          <Group gap={6} wrap="nowrap" pl={(n.level - 1) * 18}>
            <Text component="span" size="xs" w={12} c="dimmed">
              {n.children ? (expanded ? '▾' : '▸') : ''}
            </Text>
            <Text component="span" size="sm" ff={n.level === 3 ? 'monospace' : undefined} fw={n.level === 2 ? 600 : 400}>
              {n.title}
            </Text>
            {n.badge && (
              <Badge size="xs" variant="light" color={n.badge === 'view' ? 'grape' : 'blue'}>
                {n.badge}
              </Badge>
            )}
            <Text component="span" size="xs" c="dimmed">
              {n.detail}
            </Text>
          </Group>
        </Box>
        {n.children && expanded && (
          <ul role="group" style={{ margin: 0, padding: 0 }}>
            {n.children.map(item)}
          </ul>
        )}
      </li>
    );
  };

  return (
    <div>
      <TextInput size="xs" label="Filter tables" placeholder="Part of a table's name" value={filter} onChange={(e) => setFilter(e.currentTarget.value)} mb="xs" />
      {nodes.length === 0 ? (
        <Text size="sm" c="dimmed">
          {needle ? 'No table matches.' : 'No tables found.'}
        </Text>
      ) : (
        <ul role="tree" aria-label={label} ref={tree} className="schema-tree" style={{ margin: 0, padding: 0 }}>
          {nodes.map(item)}
        </ul>
      )}
      {schema.truncated && (
        <Text size="xs" c="dimmed" mt="xs">
          The datasource has more tables than were read (2,000 tables or 50,000 columns at most).
        </Text>
      )}
    </div>
  );
}
