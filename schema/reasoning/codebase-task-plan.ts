import { z } from 'zod';
import { MAX_ITEMS, capField, integrationHint, longText, stringList, surfaceField } from './common';

/** POST /v1/codebase/task/plan: order the file changes a coding task needs (plans only, reads no repository). */
const path = z.string().min(1).max(1000);

export const codeFile = z.object({
  path: path.describe('Repository-relative path, e.g. "src/auth/session.ts".'),
  lines: z.number().int().min(0).max(10_000_000).optional(),
  size_bytes: z.number().int().min(0).max(1e10).optional(),
  deps: z.array(path).max(500).optional().describe('Paths this file imports (with or without extension).'),
  kind: z
    .string()
    .max(50)
    .optional()
    .describe('source | test | config | doc | migration (inferred from the path when absent).'),
  churn: z.number().min(0).max(1e6).optional().describe('Recent commits touching the file.'),
  owners: stringList(20).optional(),
});

export const codebaseTaskPlanRequest = z.object({
  surface: surfaceField,
  task: longText.min(1).describe('The coding task in plain words.'),
  files: z.array(codeFile).min(1).max(MAX_ITEMS),
  focus_paths: z.array(path).max(500).optional().describe('Files known to need changes.'),
  constraints: stringList().optional().describe('e.g. "do not touch db/migrations", "public API is frozen".'),
  preferences: z
    .object({
      max_files: capField(MAX_ITEMS).describe('Cap on planned files and on listed tests (default 30).'),
      include_tests: z.boolean().optional().describe('Default true.'),
    })
    .optional(),
});

const factor = z.object({ name: z.string(), weight: z.number(), value: z.number() });

export const codebaseTaskPlanResponse = z.object({
  surface: z.string().nullable(),
  task_keywords: z.array(z.string()),
  change_plan: z.array(
    z.object({
      order: z.number().int(),
      path: z.string(),
      action: z.enum(['modify', 'review']),
      reason: z.string(),
      depends_on: z.array(z.string()).describe('Planned files this one imports; change those first.'),
      risk: z.object({ level: z.enum(['low', 'medium', 'high']), score: z.number(), factors: z.array(factor) }),
    }),
  ),
  test_plan: z.object({
    run: z.array(z.object({ path: z.string(), covers: z.array(z.string()) })),
    write: z.array(z.object({ for_path: z.string(), suggested_path: z.string(), reason: z.string() })),
  }),
  cycles: z.array(z.array(z.string())),
  external_deps: z.array(z.string()).describe('Imports that name no listed file (packages or unlisted files).'),
  excluded_by_constraints: z.array(z.object({ path: z.string(), constraint: z.string() })),
  truncated: z.boolean(),
  integration_hints: z.array(integrationHint),
});

export type CodebaseTaskPlanRequest = z.infer<typeof codebaseTaskPlanRequest>;
export type CodebaseTaskPlanResponse = z.infer<typeof codebaseTaskPlanResponse>;
