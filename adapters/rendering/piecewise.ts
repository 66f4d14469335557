/**
 * Moves a large value to a worker thread in pieces, so the sending event loop never spends more
 * than a few milliseconds at once on it. `postMessage` clones its whole argument synchronously
 * (about 150 ms for 100,000 three-field rows), which is exactly the pause a heartbeat must not
 * see; split into pieces of at most PIECE_NODES values, each clone takes a few milliseconds and the
 * loop runs between them. The receiver rebuilds the value with `PieceAssembler`.
 *
 * A piece either places a value at a path (`set`), fills consecutive elements of an array placed
 * earlier (`items`), or adds properties to an object placed earlier (`entries`). Pieces arrive in
 * order, so a container is always placed before its contents. Properties are defined, never
 * assigned, so a `__proto__` key in tenant data stays an ordinary property.
 */

export type PathKey = string | number;

export type Piece =
  | { kind: 'set'; path: PathKey[]; value: unknown }
  | { kind: 'items'; path: PathKey[]; start: number; items: unknown[] }
  | { kind: 'entries'; path: PathKey[]; entries: Array<[string, unknown]> };

/** Values (objects, arrays and leaves) per piece: a clone of this many takes a few milliseconds. */
const PIECE_NODES = 20_000;

function isContainer(value: unknown): value is object {
  return typeof value === 'object' && value !== null && !(value instanceof Date) && !ArrayBuffer.isView(value) && !(value instanceof ArrayBuffer);
}

/** Values in `value` (itself included), counting no further than `limit`. Iterative: depth costs no stack. */
export function countNodes(value: unknown, limit: number): number {
  let count = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0 && count < limit) {
    const v = stack.pop();
    count += 1;
    if (!isContainer(v)) continue;
    if (Array.isArray(v)) for (let i = 0; i < v.length; i += 1) stack.push(v[i]);
    else for (const k of Object.keys(v)) stack.push((v as Record<string, unknown>)[k]);
  }
  return count;
}

/**
 * The pieces of `value`, in the order they must be applied. A part smaller than `maxNodes` travels
 * whole; a larger array or object travels as an empty container followed by its members in
 * groups, and a member that is itself too large is split the same way.
 */
export function* pieces(value: unknown, maxNodes = PIECE_NODES, path: PathKey[] = []): Generator<Piece> {
  if (!isContainer(value) || countNodes(value, maxNodes) < maxNodes) {
    yield { kind: 'set', path, value };
    return;
  }
  if (Array.isArray(value)) {
    yield { kind: 'set', path, value: [] };
    let start = 0;
    let group: unknown[] = [];
    let weight = 0;
    for (let i = 0; i < value.length; i += 1) {
      const n = countNodes(value[i], maxNodes);
      if (n >= maxNodes) {
        if (group.length > 0) yield { kind: 'items', path, start, items: group };
        yield* pieces(value[i], maxNodes, [...path, i]);
        group = [];
        weight = 0;
        start = i + 1;
        continue;
      }
      if (weight + n > maxNodes && group.length > 0) {
        yield { kind: 'items', path, start, items: group };
        group = [];
        weight = 0;
        start = i;
      }
      group.push(value[i]);
      weight += n;
    }
    if (group.length > 0) yield { kind: 'items', path, start, items: group };
    return;
  }
  yield { kind: 'set', path, value: {} };
  let group: Array<[string, unknown]> = [];
  let weight = 0;
  for (const key of Object.keys(value)) {
    const member = (value as Record<string, unknown>)[key];
    const n = countNodes(member, maxNodes);
    if (n >= maxNodes) {
      if (group.length > 0) yield { kind: 'entries', path, entries: group };
      yield* pieces(member, maxNodes, [...path, key]);
      group = [];
      weight = 0;
      continue;
    }
    if (weight + n > maxNodes && group.length > 0) {
      yield { kind: 'entries', path, entries: group };
      group = [];
      weight = 0;
    }
    group.push([key, member]);
    weight += n;
  }
  if (group.length > 0) yield { kind: 'entries', path, entries: group };
}

function define(target: object, key: PathKey, value: unknown): void {
  Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
}

/** Rebuilds a value from its pieces, applied in the order they were made. */
export class PieceAssembler {
  private root: { value?: unknown } = {};

  apply(piece: Piece): void {
    if (piece.kind === 'set') {
      if (piece.path.length === 0) this.root.value = piece.value;
      else define(this.at(piece.path.slice(0, -1)), piece.path[piece.path.length - 1], piece.value);
      return;
    }
    const target = this.at(piece.path);
    if (piece.kind === 'items') piece.items.forEach((item, i) => define(target, piece.start + i, item));
    else for (const [key, member] of piece.entries) define(target, key, member);
  }

  get value(): unknown {
    return this.root.value;
  }

  private at(path: PathKey[]): object {
    let node = this.root.value;
    for (const key of path) {
      if (!isContainer(node) || !Object.prototype.hasOwnProperty.call(node, key)) throw new Error(`piece out of order at ${path.join('.')}`);
      node = (node as Record<PathKey, unknown>)[key];
    }
    if (!isContainer(node)) throw new Error(`piece out of order at ${path.join('.')}`);
    return node;
  }
}
