//! A [`Page`] as Markdown (CommonMark with GitHub's tables): the same
//! blocks, charts as `![NAME](NAME.png)`.

use std::fmt::Write as _;

use crate::page::{spans, Block, Page, Span, Table};

/// `page` as Markdown.
pub(crate) fn page(page: &Page) -> String {
    let mut out = format!("# {}\n", escape(&page.title));
    for block in &page.blocks {
        out.push('\n');
        // Writing to a String cannot fail; the results of `write!` are ignored.
        match block {
            Block::Heading { level, text } => {
                let _ = writeln!(out, "{} {}", "#".repeat(usize::from(*level)), escape(text));
            }
            Block::Paragraph(text) => {
                let _ = writeln!(out, "{}", inline(text));
            }
            Block::Callout(text) => {
                let _ = writeln!(out, "> {}", inline(text).replace('\n', "\n> "));
            }
            Block::List(items) => {
                for item in items {
                    let _ = writeln!(out, "- {}", inline(item).replace('\n', "\n  "));
                }
            }
            Block::Table(table) => table_markdown(&mut out, table),
            Block::Code(text) => {
                let fence = fence(text);
                let _ = writeln!(out, "{fence}\n{}\n{fence}", text.trim_end_matches('\n'));
            }
            Block::Chart { name, .. } => {
                let _ = writeln!(out, "![{name}]({name}.png)");
            }
            Block::Image { file, alt } => {
                let _ = writeln!(out, "![{}]({file})", escape(alt));
            }
        }
    }
    out
}

fn table_markdown(out: &mut String, table: &Table) {
    let columns = table.columns();
    if columns == 0 {
        return;
    }
    let cell = |row: &[String], column: usize| {
        let text = row.get(column).map_or("", String::as_str);
        inline(&text.replace('\n', " ")).replace('|', "\\|")
    };
    let header: Vec<String> = (0..columns).map(|c| cell(&table.header, c)).collect();
    let _ = writeln!(out, "| {} |", header.join(" | "));
    let rules: Vec<&str> = table
        .numeric_columns()
        .into_iter()
        .map(|numeric| if numeric { "---:" } else { "---" })
        .collect();
    let _ = writeln!(out, "|{}|", rules.join("|"));
    for row in &table.rows {
        let cells: Vec<String> = (0..columns).map(|c| cell(row, c)).collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
}

/// A code fence longer than any run of backticks in `text`.
fn fence(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    "`".repeat((longest + 1).max(3))
}

/// Inline text: plain parts escaped, `code` spans kept.
fn inline(text: &str) -> String {
    spans(text)
        .into_iter()
        .map(|span| match span {
            Span::Text(text) => escape(text),
            Span::Code(code) => code_span(code),
        })
        .collect()
}

/// A code span. CommonMark strips one space from each end of a span that
/// starts and ends with one, so such code gets one more on each side.
fn code_span(code: &str) -> String {
    if code.starts_with(' ') && code.ends_with(' ') && !code.trim().is_empty() {
        format!("`` {code} ``")
    } else {
        format!("`{code}`")
    }
}

/// Backslash-escapes the characters that would make plain text markup:
/// emphasis, links, HTML, code, and a quotation or heading mark at the start
/// of a line.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut line_start = true;
    for c in text.chars() {
        let marks_line = line_start && matches!(c, '>' | '#');
        if marks_line || matches!(c, '\\' | '`' | '*' | '_' | '[' | ']' | '<') {
            out.push('\\');
        }
        out.push(c);
        line_start = c == '\n' || (line_start && c == ' ');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_escaped_and_code_kept() {
        assert_eq!(inline("a *b* `c*d` [e]"), "a \\*b\\* `c*d` \\[e\\]");
        assert_eq!(inline("lone ` tick"), "lone \\` tick");
        assert_eq!(inline("a->b, #1"), "a->b, #1");
        assert_eq!(inline("> quote\n# head"), "\\> quote\n\\# head");
    }

    #[test]
    fn fences_outrun_the_backticks_inside() {
        assert_eq!(fence("plain"), "```");
        assert_eq!(fence("a ```` b"), "`````");
    }

    #[test]
    fn numeric_columns_align_right_and_pipes_are_escaped() {
        let mut out = String::new();
        table_markdown(
            &mut out,
            &Table {
                header: vec!["flow".into(), "Mbit/s".into()],
                rows: vec![vec!["a|b".into(), "1.5".into()], vec!["c".into()]],
            },
        );
        assert_eq!(
            out,
            "| flow | Mbit/s |\n|---|---:|\n| a\\|b | 1.5 |\n| c |  |\n"
        );
    }
}
