//! A [`Page`] as one self-contained HTML file: inline CSS, charts as inline
//! SVG, images as `data:` URIs, no scripts, nothing fetched from elsewhere.

use std::fmt::Write as _;
use std::path::Path;

use base64ct::{Base64, Encoding};

use crate::page::{spans, Block, Page, Span, Table};
use crate::ReportError;

/// The page's style: readable text width, light tables, charts scaled to
/// the column.
const STYLE: &str = "
body { font: 16px/1.5 system-ui, -apple-system, 'Segoe UI', 'DejaVu Sans', sans-serif;
       color: #222; max-width: 980px; margin: 2em auto; padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: 0.4em; }
h2 { font-size: 1.3em; margin-top: 2em; border-bottom: 1px solid #ddd; }
h3 { font-size: 1.1em; margin-top: 1.5em; }
h4 { font-size: 1em; margin-top: 1.2em; }
.callout { background: #eef6ee; border-left: 4px solid #2a8a4a; padding: 0.8em 1em;
           font-size: 1.1em; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { padding: 0.35em 0.9em; border-bottom: 1px solid #e4e4e4; text-align: left;
         vertical-align: top; }
th { background: #f6f6f6; }
th.number, td.number { text-align: right; font-variant-numeric: tabular-nums; }
figure { margin: 1.5em 0; }
figure svg, figure img { max-width: 100%; height: auto; border: 1px solid #e4e4e4; }
figcaption { color: #555; font-size: 0.92em; }
code, pre { font-family: ui-monospace, 'SFMono-Regular', Menlo, 'DejaVu Sans Mono', monospace;
            font-size: 0.92em; }
pre { background: #f6f6f6; padding: 0.7em 1em; overflow-x: auto; }
";

/// `page` as HTML, its images read relative to `dir`.
pub(crate) fn page(page: &Page, dir: &Path) -> Result<String, ReportError> {
    let mut out = String::new();
    // Writing to a String cannot fail; the results of `write!` are ignored.
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{title}</h1>\n",
        title = escape(&page.title),
    );
    for block in &page.blocks {
        match block {
            Block::Heading { level, text } => {
                let _ = writeln!(out, "<h{level}>{}</h{level}>", escape(text));
            }
            Block::Paragraph(text) => {
                let _ = writeln!(out, "<p>{}</p>", inline(text));
            }
            Block::Callout(text) => {
                let _ = writeln!(out, "<p class=\"callout\">{}</p>", inline(text));
            }
            Block::List(items) => {
                out.push_str("<ul>\n");
                for item in items {
                    let _ = writeln!(out, "<li>{}</li>", inline(item));
                }
                out.push_str("</ul>\n");
            }
            Block::Table(table) => table_html(&mut out, table),
            Block::Code(text) => {
                let _ = writeln!(out, "<pre><code>{}</code></pre>", escape(text));
            }
            Block::Chart { chart, .. } => {
                let _ = writeln!(out, "<figure>\n{}</figure>", chart.to_svg()?.trim_end());
            }
            Block::Image { file, alt } => {
                let path = dir.join(file);
                let bytes = std::fs::read(&path).map_err(|e| ReportError::io("read", &path, e))?;
                let _ = writeln!(
                    out,
                    "<figure><img src=\"data:{};base64,{}\" alt=\"{}\"></figure>",
                    media_type(file),
                    Base64::encode_string(&bytes),
                    escape(alt),
                );
            }
        }
    }
    out.push_str("</body>\n</html>\n");
    Ok(out)
}

fn table_html(out: &mut String, table: &Table) {
    let numeric = table.numeric_columns();
    let cell = |out: &mut String, tag: &str, column: usize, text: &str| {
        let class = if numeric[column] {
            " class=\"number\""
        } else {
            ""
        };
        let _ = write!(out, "<{tag}{class}>{}</{tag}>", inline(text));
    };
    out.push_str("<table>\n");
    if !table.header.is_empty() {
        out.push_str("<thead><tr>");
        for column in 0..numeric.len() {
            cell(
                out,
                "th",
                column,
                table.header.get(column).map_or("", String::as_str),
            );
        }
        out.push_str("</tr></thead>\n");
    }
    out.push_str("<tbody>\n");
    for row in &table.rows {
        out.push_str("<tr>");
        for column in 0..numeric.len() {
            cell(
                out,
                "td",
                column,
                row.get(column).map_or("", String::as_str),
            );
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table>\n");
}

/// The media type of an image file, from its extension.
fn media_type(file: &str) -> &'static str {
    let extension = file.rsplit('.').next().unwrap_or("").to_ascii_lowercase();
    match extension.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "svg" => "image/svg+xml",
        "webp" => "image/webp",
        _ => "application/octet-stream",
    }
}

/// Inline text: escaped, `code` spans as `<code>`.
fn inline(text: &str) -> String {
    spans(text)
        .into_iter()
        .map(|span| match span {
            Span::Text(text) => escape(text),
            Span::Code(code) => format!("<code>{}</code>", escape(code)),
        })
        .collect()
}

/// Escapes text for HTML content and attribute values.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_and_code_spans_are_code() {
        assert_eq!(
            escape("a<b & \"c\">'"),
            "a&lt;b &amp; &quot;c&quot;&gt;&#39;"
        );
        assert_eq!(
            inline("run `fairstream <x>` & see"),
            "run <code>fairstream &lt;x&gt;</code> &amp; see"
        );
        assert_eq!(inline("a ` alone"), "a ` alone");
    }

    #[test]
    fn media_types_follow_the_extension() {
        assert_eq!(media_type("a/b.PNG"), "image/png");
        assert_eq!(media_type("x.jpeg"), "image/jpeg");
        assert_eq!(media_type("x"), "application/octet-stream");
    }
}
