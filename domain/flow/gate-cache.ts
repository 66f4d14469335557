import { compileGate, type CompiledGate } from './engine';
import type { GateValidationDefinition } from './gate.types';

/**
 * Compiled gates by `gateId:schemaVersion`. A version never changes once written (every change
 * of schema, rules, mode or freetext config makes a new one), so entries need no invalidation:
 * the least recently used are simply dropped past `capacity`. Compiling costs far more than a
 * validation (JSONata parsing, regex compilation), which is why this exists.
 */
export class CompiledGateCache {
  private readonly entries = new Map<string, CompiledGate>();

  constructor(private readonly capacity = 1000) {}

  get(gateId: string, version: number, load: () => GateValidationDefinition): CompiledGate {
    const key = `${gateId}:${version}`;
    const hit = this.entries.get(key);
    if (hit) {
      // Map keeps insertion order: re-inserting marks the entry most recently used.
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit;
    }
    const compiled = compileGate(load());
    this.entries.set(key, compiled);
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value as string);
    return compiled;
  }

  get size(): number {
    return this.entries.size;
  }
}
