import { writeFileSync } from 'node:fs';
import { buildOpenApiDocument } from '@/server/rest/openapi-document';

// Writes the OpenAPI document the API serves (for linting and for client generators).
// Usage: tsx scripts/write-openapi.ts FILE [BASE_URL]
const [file, baseUrl = 'https://api.contractdata.app'] = process.argv.slice(2);
if (!file) {
  console.error('Usage: tsx scripts/write-openapi.ts FILE [BASE_URL]');
  process.exit(1);
}
writeFileSync(file, `${JSON.stringify(buildOpenApiDocument(baseUrl), null, 2)}\n`);
