/**
 * Config is parsed once, at start-up, from the environment (STYLE §4). Each workspace declares a
 * zod object whose keys are the environment variable names and whose `.describe()` texts feed the
 * configuration tables in docs/configuration.md (a test checks them against the schemas).
 */
import { z } from 'zod';

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

export function parseConfig<T extends z.ZodObject>(
  schema: T,
  env: Record<string, string | undefined>,
): z.infer<T> {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    const key = issue.path.join('.') || '(config)';
    return `  ${key}: ${issue.message} (got ${JSON.stringify(env[key] ?? null)})`;
  });
  throw new ConfigError(`Invalid configuration:\n${problems.join('\n')}`);
}

/** Runs `parse` and turns a bad config into a clear message and exit code 1, never a stack trace. */
export function loadConfigOrExit<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
}

/** Env booleans: only the literal words count, so a typo is an error rather than `false`. */
export const envBoolean = z
  .enum(['true', 'false', '1', '0'])
  .transform((v) => v === 'true' || v === '1');

export const envPort = z.coerce.number().int().min(0).max(65_535);

/** Settings every workspace accepts; spread into each schema. */
export const commonEnv = {
  LOG_LEVEL: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
    .default('info')
    .describe('pino log level'),
  DATA_DIR: z
    .string()
    .default('.data')
    .describe('Local working folder: embedded object store, runner database copies, generated admin token'),
};

/** The variable names a schema reads, with their help text and default, for docs. */
export function describeSchema(schema: z.ZodObject): { name: string; help: string; default: unknown }[] {
  return Object.entries(schema.shape).map(([name, field]) => {
    const type = field as z.ZodType;
    const parsed = type.safeParse(undefined);
    return { name, help: type.description ?? '', default: parsed.success ? parsed.data : undefined };
  });
}
