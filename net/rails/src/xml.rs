//! A small element tree read with quick-xml, each element remembering where it
//! starts, so configuration errors can name file, line and column.

use quick_xml::events::Event;
use quick_xml::Reader;

/// Where something is in a file (1-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pos {
    pub line: usize,
    pub column: usize,
}

#[derive(Debug, Clone)]
pub struct Element {
    pub name: String,
    pub pos: Pos,
    pub children: Vec<Element>,
    pub text: String,
}

impl Element {
    pub fn child(&self, name: &str) -> Option<&Element> {
        self.children.iter().find(|c| c.name == name)
    }

    pub fn children_named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Element> + 'a {
        self.children.iter().filter(move |c| c.name == name)
    }
}

/// Line and column of byte `offset` in `text`.
pub fn position(text: &str, offset: usize) -> Pos {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    Pos { line, column }
}

/// Parses `text` into its root element; errors carry the position and reason.
pub fn parse(text: &str) -> Result<Element, (Pos, String)> {
    let mut reader = Reader::from_str(text);
    let mut stack: Vec<Element> = Vec::new();
    let mut root: Option<Element> = None;
    loop {
        let start = reader.buffer_position() as usize;
        let ev = reader.read_event().map_err(|e| {
            (
                position(text, reader.error_position() as usize),
                format!("XML syntax: {e}"),
            )
        })?;
        match ev {
            Event::Start(s) | Event::Empty(s) if root.is_some() => {
                let _ = s;
                return Err((
                    position(text, start),
                    "content after the root element".into(),
                ));
            }
            Event::Start(s) => stack.push(Element {
                name: String::from_utf8_lossy(s.name().as_ref()).into_owned(),
                pos: position(text, start),
                children: Vec::new(),
                text: String::new(),
            }),
            Event::Empty(s) => {
                let el = Element {
                    name: String::from_utf8_lossy(s.name().as_ref()).into_owned(),
                    pos: position(text, start),
                    children: Vec::new(),
                    text: String::new(),
                };
                match stack.last_mut() {
                    Some(parent) => parent.children.push(el),
                    None => root = Some(el),
                }
            }
            Event::End(_) => {
                let el = stack.pop().expect("quick-xml checks that end tags match");
                match stack.last_mut() {
                    Some(parent) => parent.children.push(el),
                    None => root = Some(el),
                }
            }
            Event::Text(t) => {
                if let Some(el) = stack.last_mut() {
                    let s = t
                        .decode()
                        .map_err(|e| (position(text, start), format!("text: {e}")))?;
                    el.text.push_str(s.trim());
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if let Some(open) = stack.last() {
        return Err((open.pos, format!("<{}> is never closed", open.name)));
    }
    root.ok_or_else(|| (position(text, 0), "no root element".into()))
}
