import parsePrometheusTextFormat from 'parse-prometheus-text-format';

/**
 * A scrape of /api/metrics read with a real parser of Prometheus' text format
 * (parse-prometheus-text-format), not with the tests' own regular expressions.
 *
 * That parser folds a histogram's series into one object and loses their labels when a
 * histogram has labels (it was written for unlabelled ones). So the text is parsed twice:
 * as it is, for every family's name, TYPE and HELP; and with the histograms' TYPE lines
 * left out, which makes the parser read their _bucket, _sum and _count series as plain
 * samples with their labels.
 */
export interface Family {
  name: string;
  type: string;
  help: string;
}
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}
export interface Scrape {
  families: Map<string, Family>;
  samples: Sample[];
  /** The sum of the samples named `name` whose labels include `labels` (0 when none). */
  value(name: string, labels?: Record<string, string>): number;
  /** Whether a sample named `name` with these labels exists. */
  has(name: string, labels?: Record<string, string>): boolean;
}

export function parseScrape(text: string): Scrape {
  const families = new Map<string, Family>();
  for (const f of parsePrometheusTextFormat(text)) families.set(f.name, { name: f.name, type: f.type, help: f.help });
  const histograms = [...families.values()].filter((f) => f.type === 'HISTOGRAM').map((f) => f.name);
  const flat = text
    .split('\n')
    .filter((line) => !histograms.some((h) => line === `# TYPE ${h} histogram`))
    .join('\n');
  const samples: Sample[] = parsePrometheusTextFormat(flat).flatMap((f) =>
    f.metrics.map((m) => ({ name: f.name, labels: m.labels ?? {}, value: Number(m.value) })),
  );
  const matching = (name: string, labels: Record<string, string> = {}) =>
    samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return {
    families,
    samples,
    value: (name, labels) => matching(name, labels).reduce((sum, s) => sum + s.value, 0),
    has: (name, labels) => matching(name, labels).length > 0,
  };
}
