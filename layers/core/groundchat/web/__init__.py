"""What the page-serving functions share that needs no framework: filling a page's markers, the
security headers, typed HTTP errors and the run list's shapes. The pages' script and style are not
here: they ship with those functions only (functions/pages/page_assets)."""
