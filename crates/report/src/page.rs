//! A report page: a title and blocks (headings, paragraphs, lists, tables,
//! code, charts, images), written as one self-contained HTML file and as
//! Markdown with the charts as PNG files beside it.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use crate::{html, markdown, Chart, ReportError};

/// A table: a header row and rows of cells. Cells are plain text with
/// `code` spans, as paragraphs; rows shorter than the header are padded.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Table {
    /// The column names.
    pub header: Vec<String>,
    /// The rows, each a list of cells.
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these column names and no rows yet.
    pub fn new(header: &[&str]) -> Table {
        Table {
            header: header.iter().map(|&name| name.to_owned()).collect(),
            rows: Vec::new(),
        }
    }

    /// Adds a row.
    pub fn row(&mut self, cells: Vec<String>) -> &mut Table {
        self.rows.push(cells);
        self
    }

    /// The number of columns: the widest of the header and the rows.
    pub(crate) fn columns(&self) -> usize {
        self.rows
            .iter()
            .map(Vec::len)
            .chain([self.header.len()])
            .max()
            .unwrap_or(0)
    }

    /// For each column, whether it holds numbers (to be aligned right):
    /// most of its cells with a letter or digit in them read as numbers
    /// ("–" for none does not count; "no FEC" among figures does not turn
    /// the column).
    pub(crate) fn numeric_columns(&self) -> Vec<bool> {
        (0..self.columns())
            .map(|column| {
                let filled: Vec<&String> = self
                    .rows
                    .iter()
                    .filter_map(|row| row.get(column))
                    .filter(|cell| cell.chars().any(char::is_alphanumeric))
                    .collect();
                let numbers = filled.iter().filter(|cell| looks_numeric(cell)).count();
                numbers > 0 && 2 * numbers > filled.len()
            })
            .collect()
    }
}

/// One block of a page, in order.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Block {
    Heading { level: u8, text: String },
    Paragraph(String),
    Callout(String),
    List(Vec<String>),
    Table(Table),
    Code(String),
    Chart { name: String, chart: Chart },
    Image { file: String, alt: String },
}

/// A report page. Build it block by block, then [`Page::write`] it (or take
/// [`Page::to_html`] and [`Page::to_markdown`]).
///
/// The HTML opens offline: its CSS is inline, charts are inline SVG, images
/// are `data:` URIs, and it has no scripts and no external references. The
/// Markdown shows the same content with each chart as `NAME.png` beside it.
#[derive(Clone, Debug, PartialEq)]
pub struct Page {
    pub(crate) title: String,
    pub(crate) blocks: Vec<Block>,
}

impl Page {
    /// An empty page; `title` is its level-1 heading.
    pub fn new(title: &str) -> Page {
        Page {
            title: title.to_owned(),
            blocks: Vec::new(),
        }
    }

    /// A heading of `level` 2 to 4 (the title is level 1); other levels are
    /// brought into that range.
    pub fn heading(&mut self, level: u8, text: &str) -> &mut Page {
        self.blocks.push(Block::Heading {
            level: level.clamp(2, 4),
            text: text.to_owned(),
        });
        self
    }

    /// A paragraph of plain text; `code` spans in backticks are shown as
    /// code. Nothing in it is markup: `<`, `&`, `*` show as themselves.
    pub fn paragraph(&mut self, text: &str) -> &mut Page {
        self.blocks.push(Block::Paragraph(text.to_owned()));
        self
    }

    /// A paragraph set apart, for the one sentence a reader should take
    /// away (a conclusion); a quotation block in Markdown.
    pub fn callout(&mut self, text: &str) -> &mut Page {
        self.blocks.push(Block::Callout(text.to_owned()));
        self
    }

    /// A bulleted list; each item is text as in [`Page::paragraph`].
    pub fn list(&mut self, items: &[String]) -> &mut Page {
        self.blocks.push(Block::List(items.to_vec()));
        self
    }

    /// A table.
    pub fn table(&mut self, table: Table) -> &mut Page {
        self.blocks.push(Block::Table(table));
        self
    }

    /// Preformatted text, e.g. the command that produced the page.
    pub fn code_block(&mut self, text: &str) -> &mut Page {
        self.blocks.push(Block::Code(text.to_owned()));
        self
    }

    /// A chart; `name` is the file stem of its PNG beside the page (e.g.
    /// `throughput`, or `media/video/buffer` for one in a folder).
    pub fn chart(&mut self, name: &str, chart: Chart) -> &mut Page {
        self.blocks.push(Block::Chart {
            name: name.to_owned(),
            chart,
        });
        self
    }

    /// An existing image file beside the page (a path relative to it). The
    /// HTML embeds it as a `data:` URI, so the HTML stays self-contained.
    pub fn image(&mut self, file: &str, alt: &str) -> &mut Page {
        self.blocks.push(Block::Image {
            file: file.to_owned(),
            alt: alt.to_owned(),
        });
        self
    }

    /// The page as HTML. Images are read relative to the working directory;
    /// [`Page::to_html_in`] reads them relative to another one.
    pub fn to_html(&self) -> Result<String, ReportError> {
        self.to_html_in(Path::new(""))
    }

    /// The page as HTML, its images read relative to `dir` (where the page
    /// will be).
    pub fn to_html_in(&self, dir: &Path) -> Result<String, ReportError> {
        self.check_names()?;
        html::page(self, dir)
    }

    /// The page as Markdown; each chart is `![NAME](NAME.png)`.
    pub fn to_markdown(&self) -> String {
        markdown::page(self)
    }

    /// Writes `dir/STEM.html`, `dir/STEM.md` and `dir/NAME.png` for each
    /// chart, creating `dir` (and folders in chart names) as needed. Nothing
    /// is written unless every chart can be drawn.
    pub fn write(&self, dir: &Path, stem: &str) -> Result<(), ReportError> {
        check_name(stem)?;
        let html = self.to_html_in(dir)?;
        let mut pngs = Vec::new();
        for block in &self.blocks {
            if let Block::Chart { name, chart } = block {
                pngs.push((dir.join(format!("{name}.png")), chart.to_png()?));
            }
        }
        create_dir(dir)?;
        for (path, bytes) in pngs {
            if let Some(parent) = path.parent() {
                create_dir(parent)?;
            }
            fs::write(&path, bytes).map_err(|e| ReportError::io("write", &path, e))?;
        }
        for (extension, text) in [("html", html), ("md", self.to_markdown())] {
            let path = dir.join(format!("{stem}.{extension}"));
            fs::write(&path, text).map_err(|e| ReportError::io("write", &path, e))?;
        }
        Ok(())
    }

    /// Chart and image names are safe relative paths; chart names are
    /// unique.
    fn check_names(&self) -> Result<(), ReportError> {
        let mut charts = BTreeSet::new();
        for block in &self.blocks {
            match block {
                Block::Chart { name, .. } => {
                    check_name(name)?;
                    if !charts.insert(name.as_str()) {
                        return Err(ReportError::DuplicateName(name.clone()));
                    }
                }
                Block::Image { file, .. } => check_name(file)?,
                _ => {}
            }
        }
        Ok(())
    }
}

fn create_dir(dir: &Path) -> Result<(), ReportError> {
    fs::create_dir_all(dir).map_err(|e| ReportError::io("create", dir, e))
}

/// A name is a relative path of parts made of letters, digits, `.`, `_`
/// and `-`, none of them empty, `.` or `..`: it stays inside the page's
/// folder and needs no escaping in a URL or in Markdown.
fn check_name(name: &str) -> Result<(), ReportError> {
    let fine = |part: &str| {
        !part.is_empty()
            && part != "."
            && part != ".."
            && part
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
    };
    if name.split('/').all(fine) {
        Ok(())
    } else {
        Err(ReportError::BadName(name.to_owned()))
    }
}

/// Whether a cell reads as a number, perhaps with a unit after it: "3.2",
/// "-1", "+4 %", "36.9 dB", "0.95 (n̄ 1.1)".
fn looks_numeric(cell: &str) -> bool {
    let digits = cell.trim_start().trim_start_matches(['-', '+', '−']);
    digits.starts_with(|c: char| c.is_ascii_digit())
}

/// A piece of inline text: plain or a `code` span.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Span<'a> {
    /// Plain text.
    Text(&'a str),
    /// The inside of a pair of backticks.
    Code(&'a str),
}

/// `text` cut into plain text and `code` spans; a backtick without a
/// partner is plain text.
pub(crate) fn spans(text: &str) -> Vec<Span<'_>> {
    let mut spans = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('`') {
        let Some(length) = rest[open + 1..].find('`') else {
            break;
        };
        if open > 0 {
            spans.push(Span::Text(&rest[..open]));
        }
        spans.push(Span::Code(&rest[open + 1..open + 1 + length]));
        rest = &rest[open + 2 + length..];
    }
    if !rest.is_empty() {
        spans.push(Span::Text(rest));
    }
    spans
}

#[cfg(test)]
mod tests;
