import { executableCapabilities, type CapabilityDefinition } from '@acg/capabilities';
import { formatUsdc } from '@acg/registry';

/** The parts of an OpenAPI 3.0 document this module touches (the rest passes through as is). */
interface OpenApiDocument {
  paths?: Record<
    string,
    Record<
      string,
      { description?: string; requestBody?: { content?: Record<string, { schema?: Record<string, unknown>; examples?: Record<string, unknown> }> } }
    >
  >;
}

/** The `{capability_id, input}` body that runs `d`, from its example (execute form, or the bare input). */
function executeExample(d: CapabilityDefinition): unknown {
  const request = d.example.request as Record<string, unknown> | null;
  if (request && typeof request === 'object' && 'capability_id' in request && 'input' in request) return request;
  return { capability_id: d.id, input: request ?? {} };
}

/**
 * Documents the capabilities `POST /api/v1/execute` runs in the OpenAPI document generated from
 * the router: the `capability_id` property lists each executable id with its price (USDC), and the
 * request body carries one named example per capability (its example request in execute form).
 * The zod schema stays generic (`capability_id` is any `<product>.<name>`: an unknown id is a 404,
 * not a 400), so this is documentation only. Returns `doc`, changed in place.
 */
export function documentCapabilities<T extends object>(doc: T, definitions: readonly CapabilityDefinition[]): T {
  const operation = (doc as OpenApiDocument).paths?.['/api/v1/execute']?.post;
  const media = operation?.requestBody?.content?.['application/json'];
  if (!operation || !media) return doc;
  const executable = executableCapabilities(definitions);
  const list = executable.map((d) => `\`${d.id}\` (${formatUsdc(d.price.base_units)} USDC per ${d.price.unit})`).join(', ');
  const properties = (media.schema?.properties ?? undefined) as Record<string, Record<string, unknown>> | undefined;
  if (properties?.capability_id) properties.capability_id.description = `Id of an executable capability: ${list}. Its input_schema is in GET /registry.`;
  operation.description = `${operation.description ?? ''} Executable capabilities: ${list}.`.trim();
  media.examples = Object.fromEntries(
    executable.map((d) => [d.id, { summary: `${d.name}: ${formatUsdc(d.price.base_units)} USDC per ${d.price.unit}`, value: executeExample(d) }]),
  );
  return doc;
}
