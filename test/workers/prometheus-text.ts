/**
 * A small parser for the Prometheus text format 0.0.4, strict enough to catch what would break a
 * real scraper: samples before their `# TYPE`, a family split in two, bad escapes, bad values.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Parsed {
  samples: Sample[];
  /** Family name → `gauge` | `counter` | … */
  types: Map<string, string>;
  /** `#` lines that are neither HELP nor TYPE. */
  comments: string[];
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(,|$)/y;

function unescapeLabel(value: string): string {
  return value.replace(/\\(.)/g, (_m, ch: string) => {
    if (ch === "n") return "\n";
    if (ch === "\\" || ch === '"') return ch;
    throw new Error(`bad escape \\${ch}`);
  });
}

function parseLabels(text: string): Record<string, string> {
  const labels: Record<string, string> = {};
  const body = text.slice(1, -1);
  LABEL.lastIndex = 0;
  while (LABEL.lastIndex < body.length) {
    const match = LABEL.exec(body);
    if (!match) throw new Error(`bad labels: ${text}`);
    const [, name, value] = match as unknown as [string, string, string];
    if (name in labels) throw new Error(`duplicate label ${name}`);
    labels[name] = unescapeLabel(value);
  }
  return labels;
}

function parseValue(text: string): number {
  if (text === "+Inf") return Number.POSITIVE_INFINITY;
  if (text === "-Inf") return Number.NEGATIVE_INFINITY;
  if (text === "NaN") return Number.NaN;
  if (!/^-?\d+(\.\d+)?(e[+-]?\d+)?$/i.test(text)) throw new Error(`bad value ${text}`);
  return Number(text);
}

export function parsePrometheus(text: string): Parsed {
  if (!text.endsWith("\n")) throw new Error("exposition must end with a line feed");
  const parsed: Parsed = { samples: [], types: new Map(), comments: [] };
  let current: string | undefined;
  for (const line of text.slice(0, -1).split("\n")) {
    if (line.startsWith("# TYPE ")) {
      const [name, type] = line.slice(7).split(" ") as [string, string];
      if (parsed.types.has(name)) throw new Error(`second TYPE for ${name}`);
      parsed.types.set(name, type);
      current = name;
    } else if (line.startsWith("#")) {
      if (!line.startsWith("# HELP ")) parsed.comments.push(line);
    } else {
      const match = SAMPLE.exec(line);
      if (!match) throw new Error(`bad sample line: ${line}`);
      const [, name, labels, value] = match as unknown as [string, string, string | undefined, string];
      // A TYPE line is written once per family, so a sample away from it means a split family.
      if (name !== current && !isHistogramSample(parsed, current, name)) {
        throw new Error(`sample of ${name} outside its family`);
      }
      parsed.samples.push({ name, labels: labels ? parseLabels(labels) : {}, value: parseValue(value) });
    }
  }
  return parsed;
}

/** A histogram family `family` writes its samples as `family_bucket`, `family_sum` and `family_count`. */
function isHistogramSample(parsed: Parsed, family: string | undefined, name: string): boolean {
  if (family === undefined || parsed.types.get(family) !== "histogram") return false;
  return [`${family}_bucket`, `${family}_sum`, `${family}_count`].includes(name);
}

/** Samples of `name` whose labels include `where`. */
export function select(parsed: Parsed, name: string, where: Record<string, string> = {}): Sample[] {
  return parsed.samples.filter(
    (s) => s.name === name && Object.entries(where).every(([k, v]) => s.labels[k] === v),
  );
}

/** The one sample of `name` matching `where`'s value, or undefined when there is none. */
export function sampleValue(
  parsed: Parsed,
  name: string,
  where: Record<string, string> = {},
): number | undefined {
  const found = select(parsed, name, where);
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(where)}`);
  return found[0]?.value;
}
