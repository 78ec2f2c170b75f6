"""s2s's word tokenizer and detokenizer (src/text/tokenize.h), for the cross-check's
comparison and for reading real text as s2s does."""
import unicodedata


# ---- the word tokenizer (src/text/tokenize.h), for crosscheck.py's comparison --------

SPLIT_OFF = set('!?;:"()¿¡«»…“”')
ELISIONS = {"c", "d", "j", "l", "m", "n", "s", "t", "qu", "jusqu", "lorsqu", "puisqu", "quoiqu"}


def split_apostrophes(word):
    """Cuts a word at its apostrophes: after an elision the apostrophe stays left
    (j'ai -> j' ai), between two other letters or digits it starts the next piece
    (don't -> don 't), anywhere else it is a token of its own."""
    pieces, lead, rest = [], "", word
    while rest:
        k = rest.find("'")
        if k < 0:
            pieces.append(lead + rest)
            break
        left, right = rest[:k], rest[k + 1:]
        if left and right and left[-1].isalnum() and right[0].isalnum():
            if left.lower() in ELISIONS:
                pieces.append(lead + left + "'")
                lead = ""
            else:
                pieces.append(lead + left)
                lead = "'"
        else:
            if left:
                pieces.append(lead + left)
            pieces.append("'")
            lead = ""
        rest = right
    return pieces


def tokenize(line, lowercase=False):
    """One line -> its word tokens, by the rules of src/text/tokenize.h."""
    line = unicodedata.normalize("NFC", line)
    line = line.replace("\u2019", "'").replace("\u2018", "'")
    for gone in ("\u200b", "\u00ad", "\ufeff"):
        line = line.replace(gone, "")
    if lowercase:
        line = line.lower()
    spaced = "".join(" %s " % ch if ch in SPLIT_OFF else ch for ch in line)
    out = []
    for k, ch in enumerate(spaced):
        if ch in ".,":
            between_digits = (0 < k < len(spaced) - 1 and spaced[k - 1].isdecimal() and
                              spaced[k + 1].isdecimal())
            out.append(ch if between_digits else " %s " % ch)
        else:
            out.append(ch)
    return [piece for word in "".join(out).split() for piece in split_apostrophes(word)]


ATTACH_LEFT = {".", ",", "!", "?", ";", ":", ")", "]", "}", "\u2026", "\u201d"}
ATTACH_RIGHT = {"(", "[", "{", "\u201c", "\u00bf", "\u00a1"}


def detokenize(tokens):
    """Word tokens as text, by the rules of detokenize_text (src/text/tokenize.c): what s2s
    translate writes with translate.detokenize true, which tokenize() reads back as the
    same tokens ("i 'm busy ." -> "i'm busy."; the tokens joined by spaces would not:
    tokenize("'m") is ["'", "m"])."""
    out, glue_next, quote_open = [], True, False
    for t in tokens:
        glue = glue_next or t in ATTACH_LEFT or (t[0] == "'" and len(t) > 1)
        glue_next = t in ATTACH_RIGHT or (len(t) > 1 and t[-1] == "'")
        if t == '"':                                   # opening binds right, closing left
            glue = glue_next or quote_open
            glue_next = not quote_open
            quote_open = not quote_open
        out.append(t if glue else " " + t)
    return "".join(out)
