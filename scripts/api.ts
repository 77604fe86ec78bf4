/**
 * The API process `npm start` runs (scripts/start.ts): the API with the embedded default's sheets
 * worker wired in (DECISIONS §1). Here, not in the API, is where the two workspaces meet: the API
 * knows only the declared interface (`@uda/shared/sheets-worker`), the exporter implements it.
 */
import { loadApiConfig } from '@uda/api/config';
import { runApi } from '@uda/api/main';
import { startEmbeddedSheetsWorker } from '@uda/exporter/sheets/embedded';

await runApi(loadApiConfig(), { startSheetsWorker: startEmbeddedSheetsWorker });
