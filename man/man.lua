-- man/man.lua: the pandoc filter that turns the Markdown docs into man pages (man/meson.build).
--
-- The docs are written for a browser; a man page has its own conventions, and groff must format
-- it without a warning (tests/install/man.sh runs `groff -ww` and `man --warnings` on each
-- page). So:
--  * NAME comes first, from the metadata `name` and `description` that man/meson.build passes;
--  * the first document's title becomes DESCRIPTION (it only repeats NAME), every other level 1
--    and each level 2 heading a section (.SH, upper case), level 3 a subsection (.SS), deeper
--    ones a bold paragraph;
--  * tables become tagged paragraphs (.TP): tbl cannot fit the docs' wide tables into 80
--    columns, and warns;
--  * a link to another doc becomes a reference to its man page, or to its path in the source
--    tree when it has none; a link inside the page keeps only its text;
--  * box-drawing characters in code blocks become ASCII;
--  * the page is left-adjusted (.ad l): justifying lines full of long option names and paths
--    is what groff warns about ("cannot adjust line").

local pages = {
  ["cli.md"] = "cordon(1)",
  ["policy.md"] = "cordon-policy(5)",
  ["settings.md"] = "cordon-settings(5)",
  ["protocol.md"] = "cordond(8)",
  ["daemon.md"] = "cordond(8)",
}

local first_title = true

function Header(h)
  if h.level == 1 and first_title then
    first_title = false
    return pandoc.Header(1, { pandoc.Str("DESCRIPTION") })
  end
  if h.level <= 2 then
    return pandoc.Header(1, { pandoc.Str(pandoc.text.upper(pandoc.utils.stringify(h.content))) })
  end
  if h.level == 3 then
    return pandoc.Header(2, h.content)
  end
  return pandoc.Para({ pandoc.Strong(h.content) })
end

function Link(l)
  local target = l.target
  if target:match("^#") then
    return l.content
  end
  if target:match("^%a+:") then
    return nil -- an absolute URL: pandoc prints it after the text
  end
  local file = target:gsub("#.*$", "")
  local base = file:match("([^/]+)$") or file
  local page = pages[base]
  local ref = page or ("docs/" .. file:gsub("^%.%./", ""):gsub("^docs/", ""))
  local text = pandoc.utils.stringify(l.content)
  if text:match("%.md$") then
    return { pandoc.Str(ref) } -- "[settings.md](settings.md)": the page is the better name
  end
  local out = l.content
  if text ~= ref then
    table.insert(out, pandoc.Str(" (" .. ref .. ")"))
  end
  return out
end

-- The docs draw trees with box-drawing characters, which groff's default (PostScript) device
-- has no glyph for: ASCII lines instead.
local box = { ["├"] = "|", ["└"] = "`", ["│"] = "|", ["─"] = "-", ["┌"] = "+", ["┐"] = "+",
              ["┘"] = "+", ["┤"] = "|", ["┬"] = "+", ["┴"] = "+", ["┼"] = "+" }

function CodeBlock(c)
  c.text = c.text:gsub("\226[\148-\149][\128-\191]", function(ch) return box[ch] or "+" end)
  return c
end

-- A table cell's blocks as inlines (a cell is one Plain in the docs).
local function inlines(blocks)
  local out = {}
  for _, b in ipairs(blocks) do
    if b.content then
      if #out > 0 then table.insert(out, pandoc.Space()) end
      for _, i in ipairs(b.content) do table.insert(out, i) end
    end
  end
  return out
end

-- Each row becomes a tagged paragraph: the first cell is the tag; the others follow, each under
-- its column's heading when the table has headings and more than two columns.
function Table(t)
  local s = pandoc.utils.to_simple_table(t)
  local items = {}
  for _, row in ipairs(s.rows) do
    local defs = {}
    for j = 2, #row do
      local body = inlines(row[j])
      local head = s.headers[j] and inlines(s.headers[j]) or {}
      if #body > 0 then
        if #row > 2 and #head > 0 then
          local para = { pandoc.Emph(head), pandoc.Str(":"), pandoc.Space() }
          for _, i in ipairs(body) do table.insert(para, i) end
          body = para
        end
        table.insert(defs, pandoc.Para(body))
      end
    end
    if #defs == 0 then defs = { pandoc.Para({}) } end
    table.insert(items, { inlines(row[1]), { defs } })
  end
  return pandoc.DefinitionList(items)
end

function Pandoc(doc)
  local meta = doc.meta
  local name = pandoc.utils.stringify(meta.name)
  local head = {
    pandoc.RawBlock("man", ".ad l"),
    pandoc.Header(1, { pandoc.Str("NAME") }),
    -- Raw: "\-" is the NAME line's separator that apropos and lexgrog parse.
    pandoc.RawBlock("man", ".PP\n" .. name .. " \\- " .. pandoc.utils.stringify(meta.description)),
  }
  for i = #head, 1, -1 do table.insert(doc.blocks, 1, head[i]) end
  if meta.seealso then
    table.insert(doc.blocks, pandoc.Header(1, { pandoc.Str("SEE ALSO") }))
    table.insert(doc.blocks, pandoc.Para({ pandoc.Str(pandoc.utils.stringify(meta.seealso)) }))
  end
  return doc
end
