import { describe, it, expect } from '@jest/globals';
import { sanitizeEngineMessage } from '@uda/shared/duckdb';
import { engineError, SANDBOX_REFUSAL_MESSAGE } from './errors.ts';

describe('engine errors', () => {
  it('removes absolute paths and the echoed query from engine messages', () => {
    const text = 'IO Error: No files found that match the pattern "/srv/data/runner-x/db/service.db"\n\nLINE 1: SELECT * FROM x\n              ^';
    expect(sanitizeEngineMessage(text)).toBe('IO Error: No files found that match the pattern "[path]"');
  });

  it('keeps the "Did you mean" hint that helps fix the query', () => {
    const text = 'Catalog Error: Table with name gutenburg does not exist!\nDid you mean "gutenberg"?\n\nLINE 1: FROM gutenburg\n             ^';
    expect(engineError(new Error(text)).message).toBe('Catalog Error: Table with name gutenburg does not exist! Did you mean "gutenberg"?');
  });

  it('says neither "native callback" nor the statement-extraction prefix', () => {
    expect(sanitizeEngineMessage('Error in native callback')).not.toMatch(/native callback/);
    expect(sanitizeEngineMessage('Failed to extract statements: Parser Error: syntax error at or near ";"')).toBe('syntax error at or near ";"');
  });

  it('answers sandbox refusals with one fixed message that names no file', () => {
    const error = engineError(new Error('Permission Error: Cannot access file "/etc/passwd" - file system operations are disabled by configuration'));
    expect(error.code).toBe('QUERY_INVALID');
    expect(error.message).toBe(SANDBOX_REFUSAL_MESSAGE);
  });
});
