/**
 * A strict, small XML 1.0 parser for the tests: it throws on anything not well-formed (unbalanced
 * or mismatched tags, unquoted or duplicate attributes, bare `&` or `<` in text, unknown entities,
 * characters XML forbids, content after the root). Enough to prove the JUnit report well-formed
 * without a dependency; no DTD, no namespaces.
 */

export interface XmlElement {
  readonly name: string;
  readonly attributes: Readonly<Record<string, string>>;
  readonly children: readonly XmlElement[];
  readonly text: string;
}

const NAME = /^[A-Za-z_:][A-Za-z0-9_:.-]*/;
const FORBIDDEN = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;

export function parseXml(source: string): XmlElement {
  if (FORBIDDEN.test(source)) throw new Error("a character XML 1.0 forbids");
  let i = 0;
  const fail = (message: string): never => {
    throw new Error(`${message} at offset ${i}: ${JSON.stringify(source.slice(i, i + 40))}`);
  };
  const skipSpace = () => {
    while (i < source.length && /\s/.test(source[i]!)) i++;
  };
  const decode = (text: string): string =>
    text.replace(/&([^;]*);|&/g, (whole, entity: string | undefined) => {
      if (entity === undefined) return fail("bare & in text");
      const named: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };
      if (entity in named) return named[entity]!;
      const numeric = /^#(x[0-9a-fA-F]+|[0-9]+)$/.exec(entity);
      if (numeric === null) return fail(`unknown entity ${whole}`);
      const code = entity[1] === "x" ? Number.parseInt(entity.slice(2), 16) : Number(entity.slice(1));
      const char = String.fromCodePoint(code);
      if (FORBIDDEN.test(char)) fail(`entity ${whole} is a forbidden character`);
      return char;
    });

  if (source.startsWith("<?xml")) {
    const end = source.indexOf("?>");
    if (end === -1) fail("unterminated XML declaration");
    i = end + 2;
  }
  skipSpace();

  const element = (): XmlElement => {
    if (source[i] !== "<") fail("expected <");
    i++;
    const name = NAME.exec(source.slice(i))?.[0] ?? fail("expected an element name");
    i += name.length;
    const attributes: Record<string, string> = {};
    for (;;) {
      const before = i;
      skipSpace();
      if (source.startsWith("/>", i)) {
        i += 2;
        return { name, attributes, children: [], text: "" };
      }
      if (source[i] === ">") {
        i++;
        break;
      }
      if (i === before) fail("expected whitespace before an attribute");
      const attr = NAME.exec(source.slice(i))?.[0] ?? fail("expected an attribute name");
      i += attr.length;
      if (attr in attributes) fail(`duplicate attribute ${attr}`);
      skipSpace();
      if (source[i] !== "=") fail("expected =");
      i++;
      skipSpace();
      const quote = source[i];
      if (quote !== '"' && quote !== "'") fail("attribute value not quoted");
      const end = source.indexOf(quote!, i + 1);
      if (end === -1) fail("unterminated attribute value");
      const raw = source.slice(i + 1, end);
      if (raw.includes("<")) fail("< in an attribute value");
      attributes[attr] = decode(raw);
      i = end + 1;
    }
    const children: XmlElement[] = [];
    let text = "";
    for (;;) {
      if (i >= source.length) fail(`unclosed <${name}>`);
      if (source.startsWith("</", i)) {
        i += 2;
        const closing = NAME.exec(source.slice(i))?.[0];
        if (closing !== name) fail(`</${closing}> closes <${name}>`);
        i += name.length;
        skipSpace();
        if (source[i] !== ">") fail("expected >");
        i++;
        return { name, attributes, children, text };
      }
      if (source.startsWith("<!--", i)) {
        const end = source.indexOf("-->", i);
        if (end === -1) fail("unterminated comment");
        i = end + 3;
        continue;
      }
      if (source.startsWith("<![CDATA[", i)) {
        const end = source.indexOf("]]>", i);
        if (end === -1) fail("unterminated CDATA");
        text += source.slice(i + 9, end);
        i = end + 3;
        continue;
      }
      if (source[i] === "<") {
        children.push(element());
        continue;
      }
      const next = source.indexOf("<", i);
      const raw = source.slice(i, next === -1 ? source.length : next);
      if (raw.includes("]]>")) fail("]]> in text");
      text += decode(raw);
      i += raw.length;
    }
  };

  const root = element();
  skipSpace();
  if (i !== source.length) fail("content after the root element");
  return root;
}
