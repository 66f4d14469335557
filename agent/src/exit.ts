/** A condition the agent cannot work past (bad flags, a refused token, another key): it logs the message and exits 1. */
export class AgentExit extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AgentExit';
  }
}
