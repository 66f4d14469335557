/**
 * Values by key, made on first use; past `capacity` the least recently used is dropped. For things
 * that never change once written (a gate version, a set of expressions), so nothing needs
 * invalidating.
 */
export class LruCache<V> {
  private readonly entries = new Map<string, V>();

  constructor(private readonly capacity: number) {}

  get(key: string, make: () => V): V {
    let value = this.entries.get(key);
    if (value !== undefined) {
      // Map keeps insertion order: re-inserting marks the entry most recently used.
      this.entries.delete(key);
    } else {
      value = make();
      if (this.entries.size >= this.capacity) this.entries.delete(this.entries.keys().next().value as string);
    }
    this.entries.set(key, value);
    return value;
  }

  get size(): number {
    return this.entries.size;
  }
}
