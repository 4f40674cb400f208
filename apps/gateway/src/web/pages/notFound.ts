import { html, type SafeHtml } from '../html.js';
import { layout } from '../layout.js';

/** The HTML 404 page: what was asked for, and where to go instead. */
export function notFoundPage(path: string, what = 'page'): SafeHtml {
  return layout({
    title: 'Not found',
    main: html`<h1>Not found</h1>
<p>There is no ${what} at <code>${path.slice(0, 200)}</code>.</p>
<ul>
<li><a href="/">Browse the capability catalog</a></li>
<li><a href="/status">See the operational status</a></li>
<li><a href="/openapi.json">Read the API description (OpenAPI)</a></li>
</ul>`,
  });
}
