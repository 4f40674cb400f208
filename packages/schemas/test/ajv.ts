import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

/** A strict Ajv for JSON Schema 2020-12 with the standard formats (date-time, uri, uuid, ...). */
export function strictAjv() {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  addFormats(ajv);
  return ajv;
}
