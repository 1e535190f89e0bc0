import { z } from 'zod';

const Drift = z.object({
  baseline_eri: z.number().nullable().describe('Mean ERI of the previous 24 h of samples (null before any).'),
  baseline_samples: z.number().int(),
  delta: z.number().describe('eri − baseline_eri.'),
  z: z.number().describe('delta / max(0.02, standard deviation of the baseline).'),
  drifting: z.boolean().describe('|z| ≥ 2 with at least 6 baseline samples.'),
  direction: z.enum(['up', 'down', 'none']),
});

export const EriResponse = z
  .object({
    eri: z.number().min(0).max(1).describe('Emotional resonance index, 0..1.'),
    ers: z.number().int().min(0).max(100).describe('Resonance score: round(eri × 100).'),
    pacing: z.enum(['calm', 'steady', 'brisk', 'surging']),
    volatility: z.number(),
    coherence: z.number(),
    musical_key: z.string(),
    bpm: z.number().int(),
    arte_state: z.enum(['still', 'flowing', 'vivid', 'stormy']),
    arte_intensity: z.number(),
    arte_palette: z.array(z.string()),
    drift: Drift,
    signals: z.object({
      sentiment: z.number(),
      sentiment_samples: z.number().int(),
      requests_per_min: z.number(),
      jobs_per_min: z.number(),
      error_rate: z.number(),
    }),
    health: z
      .object({
        cpu: z.number(),
        ram: z.number(),
        db: z.number(),
        cognitive_health: z.enum(['thriving', 'steady', 'strained', 'overloaded']),
      })
      .optional()
      .describe('Substrate load measured by the sampler (0..1) and its label.'),
    curiosity: z
      .object({ target: z.string(), priority: z.number() })
      .optional()
      .describe('Busiest capability family in the window and its share.'),
    sampled_at: z.string().nullable().describe('When the schedule took this sample; null before the first sample.'),
    window_minutes: z.number().int(),
  })
  .meta({ id: 'EriResponse' });

export const AeciResponse = z
  .object({
    index: z.number().int().min(0).max(100),
    category: z.enum(['flourishing', 'steady', 'mixed', 'strained', 'distressed']),
    stability_score: z.number().min(0).max(1),
    sentiment_momentum: z.number(),
    ui_hue_shift: z.number().int(),
    tone_bias: z.enum(['encouraging', 'neutral', 'gentle']),
    week_start: z.string(),
    week_end: z.string(),
    days_with_data: z.number().int(),
  })
  .meta({ id: 'AeciResponse' });

export const FlowPrompt = z
  .object({
    id: z.string(),
    trigger: z.enum(['manual', 'eri_drift']),
    prompt: z.string(),
    context: z.record(z.string(), z.unknown()),
    created_at: z.string(),
  })
  .meta({ id: 'FlowPrompt' });

export const FlowPromptResponse = z
  .object({ prompt: FlowPrompt.nullable(), pending: z.number().int() })
  .meta({ id: 'FlowPromptState' });

export const FlowTriggerBody = z
  .object({
    topic: z.string().trim().min(1).max(200).optional().describe('What the reflection should be about.'),
    note: z.string().max(1000).optional().describe('Kept with the prompt as context.'),
  })
  .meta({ id: 'FlowTriggerRequest' });

export const FlowDismissBody = z.object({ id: z.string().min(1).max(100) }).meta({ id: 'FlowDismissRequest' });

export const FlowDismissResponse = z.object({
  ok: z.literal(true),
  id: z.string(),
  already_dismissed: z.boolean(),
  pending: z.number().int(),
});
