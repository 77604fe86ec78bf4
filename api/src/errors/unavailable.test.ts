import { describe, expect, it } from '@jest/globals';
import { isStoreUnavailable } from './unavailable.ts';

describe('a store that blinked', () => {
  // Seen in the load run with `pg-restart`: a charge's statement cut by the restart answered 500.
  // knex puts the statement before pg's message (`<sql> - <message>`), so the message's start is SQL.
  it("is recognised behind the statement knex puts before pg's message", () => {
    const cut = new Error(`\nWITH cur AS (\n  SELECT id FROM accounts WHERE id = $5 FOR UPDATE\n)\nUPDATE accounts a SET period = $16 - Connection terminated unexpectedly`);
    expect(isStoreUnavailable(cut)).toBe(true);
    expect(isStoreUnavailable(new Error('Connection terminated unexpectedly'))).toBe(true);
  });

  it('is not any error whose statement mentions a connection', () => {
    expect(isStoreUnavailable(new Error(`SELECT 'Connection terminated' - invalid input syntax for type uuid`))).toBe(false);
  });
});
