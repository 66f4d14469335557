import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CONFIG_VARIABLES } from '../../domain/config';

describe('README', () => {
  const readme = readFileSync(join(__dirname, '../../README.md'), 'utf8');

  it('documents every configuration variable the service reads', () => {
    expect(CONFIG_VARIABLES.filter((v) => !readme.includes(`\`${v}\``))).toEqual([]);
  });

  it('names the two commands', () => {
    expect(readme).toContain('npm start');
    expect(readme).toContain('npm test');
  });
});
