// MAIN-world entry, run in every frame at document_start (manifest.json): the
// page-world hooks for dialogs and the console. See content/page-hooks.ts.
import { installPageHooks } from './content/page-hooks';

installPageHooks(window);
