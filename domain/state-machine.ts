/**
 * A status column's state machine as data: the statuses, those a row may be created in, and the
 * allowed moves. The owner module of each table in db/ moves a row only with a conditional UPDATE
 * whose `WHERE status = ANY(...)` is `sourcesOf(to)`, so a move the table does not list changes
 * nothing (docs/architecture.md, "State machines").
 */
export interface StateMachine<S extends string> {
  readonly statuses: readonly S[];
  /** Statuses a row may be inserted with. */
  readonly initial: readonly S[];
  /** For each status, the statuses it may move to. A status listing itself may be re-entered (a re-claim). */
  readonly transitions: Readonly<Record<S, readonly S[]>>;
  /** Statuses with no way out. */
  readonly terminal: readonly S[];
  /**
   * Statuses in which the row's work is over: the terminal ones, and those a table leaves only by a
   * late repair move (a report run `failed` at delivery becomes `completed` when a manual retry
   * delivers). What stamps `completed_at`, what retention sweeps and what a late step gives up on.
   */
  readonly ended: readonly S[];
  canMove(from: S, to: S): boolean;
  /**
   * The statuses from which `to` may be reached in one move: the `$from` of the owner's UPDATE.
   * With `among`, a narrower move (only from these), refused at once if the table allows one of them not.
   */
  sourcesOf(to: S, among?: readonly S[]): S[];
  isTerminal(status: S): boolean;
  isEnded(status: S): boolean;
}

/** `ended`: the statuses besides the terminal ones in which the work is over (default none). */
export function defineStateMachine<S extends string>(
  statuses: readonly S[],
  initial: readonly S[],
  transitions: Record<S, readonly S[]>,
  options: { ended?: readonly S[] } = {},
): StateMachine<S> {
  const terminal = statuses.filter((s) => transitions[s].length === 0);
  const ended = statuses.filter((s) => terminal.includes(s) || (options.ended ?? []).includes(s));
  return {
    statuses,
    initial,
    transitions,
    terminal,
    ended,
    canMove: (from, to) => transitions[from].includes(to),
    sourcesOf: (to, among) => {
      const illegal = among?.filter((from) => !transitions[from].includes(to)) ?? [];
      if (illegal.length > 0) throw new Error(`no move from ${illegal.join(', ')} to ${to}`);
      return statuses.filter((from) => transitions[from].includes(to) && (!among || among.includes(from)));
    },
    isTerminal: (status) => transitions[status].length === 0,
    isEnded: (status) => ended.includes(status),
  };
}
