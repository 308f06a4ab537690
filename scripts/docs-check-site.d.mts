/** Checks a built documentation site: internal links and anchors resolve, nothing is fetched from elsewhere. */
export declare function checkSite(dir: string, options?: { base?: string }): { pages: number; links: number; problems: string[] };
