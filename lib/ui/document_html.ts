/**
 * The start and end every page shares: the doctype, the `<head>` (title, style sheet, module
 * script) and the closing tags around the page's `<body>`.
 *
 * @module
 */
import { esc } from "./responses.ts";

/** What a page's head holds. */
export interface PageHead {
  /** The title (escaped here). */
  readonly title: string;
  /** Lines between the title and the style sheet, each ending in a newline (markup, not escaped). */
  readonly extra?: string;
  /** The style sheet. */
  readonly style: string;
  /** The path of the page's module script. */
  readonly script: string;
}

/** A whole page: the head `head` describes, then `body` (the `<body>` element). */
export function htmlDocument(head: PageHead, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(head.title)}</title>
${head.extra ?? ""}<style>${head.style}</style>
<script type="module" src="${head.script}"></script>
</head>
${body}
</html>
`;
}
