import { LruCache } from '../lru-cache';
import { compileGate, type CompiledGate } from './engine';
import type { GateValidationDefinition } from './gate.types';

/**
 * Compiled gates by `gateId:schemaVersion`. A version never changes once written (every change
 * of schema, rules, mode or freetext config makes a new one), so entries need no invalidation.
 * Compiling costs far more than a validation (JSONata parsing, regex compilation), which is why
 * this exists.
 */
export class CompiledGateCache {
  private readonly cache: LruCache<CompiledGate>;

  constructor(capacity = 1000) {
    this.cache = new LruCache(capacity);
  }

  get(gateId: string, version: number, load: () => GateValidationDefinition): CompiledGate {
    return this.cache.get(`${gateId}:${version}`, () => compileGate(load()));
  }

  get size(): number {
    return this.cache.size;
  }
}
