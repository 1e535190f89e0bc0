import { sql, ForeignKeyIntegrityConstraintViolationError, UniqueIntegrityConstraintViolationError } from 'slonik';
import { createDb } from '../../activities/store/db';

const URL = `${process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432'}/postgres`;

test('integrity errors reach the caller as slonik typed errors, not ERR_UNHANDLED_ERROR', async () => {
  const db = await createDb({ url: URL, maxConnections: 1 });
  try {
    await db.connect(async (c) => {
      await c.query(sql.unsafe`CREATE TEMP TABLE p (id int PRIMARY KEY)`);
      await c.query(sql.unsafe`CREATE TEMP TABLE ch (p int REFERENCES p(id))`);
      await c.query(sql.unsafe`INSERT INTO p VALUES (1)`);
      await expect(c.query(sql.unsafe`INSERT INTO ch VALUES (2)`)).rejects.toBeInstanceOf(
        ForeignKeyIntegrityConstraintViolationError,
      );
      await expect(c.query(sql.unsafe`INSERT INTO p VALUES (1)`)).rejects.toBeInstanceOf(
        UniqueIntegrityConstraintViolationError,
      );
    });
  } finally {
    await db.end();
  }
});
