"""Image corpora as s2s reads them (src/data/pictures.c, image.c, ground.c and
src/report/grounding.c): the pictures a .src file lists, their channel means, the word
boxes of a .ground file, and attention correctness (pointing and mass) against them.
Pictures are read with PIL (Debian's python3-pil), s2s's with stb_image: both give the
8-bit values, divided here by 255 as there."""
import os

import torch
import torch.nn.functional as F

from reference.config import ConfigError
from reference.data import read_lines


def load_pictures(list_path, lines, size, resize):
    """The pictures named by lines (a .src file's lines: paths relative to its folder
    unless absolute) as (n, size, size, 3) float32, channels last, values in [0, 1], and
    each one's size in the file [(width, height)]. Resized by s2s's bilinear rule (each
    output pixel's centre mapped to (x + 0.5) w / size - 0.5, clamped at the borders:
    torch's interpolate, align_corners False) when resize, else refused unless size x size."""
    from PIL import Image
    folder = os.path.dirname(os.path.abspath(list_path))
    out = torch.empty(len(lines), size, size, 3)
    orig = []
    for k, line in enumerate(lines):
        path = line if os.path.isabs(line) else os.path.join(folder, line)
        try:
            with Image.open(path) as picture:
                rgb = picture.convert("RGB")
        except OSError as e:
            raise ConfigError("%s:%d: %s: cannot read the picture (%s)" % (list_path, k + 1,
                                                                           line, e)) from None
        w, h = rgb.size
        orig.append((w, h))
        x = torch.frombuffer(bytearray(rgb.tobytes()), dtype=torch.uint8).view(h, w, 3)
        x = x.float() / 255.0
        if (w, h) != (size, size):
            if not resize:
                raise ConfigError("%s:%d: %s: %d x %d pixels, not %d x %d (data.image_resize: "
                                  "false)" % (list_path, k + 1, line, w, h, size, size))
            x = F.interpolate(x.permute(2, 0, 1).unsqueeze(0), size=(size, size),
                              mode="bilinear", align_corners=False)[0].permute(1, 2, 0)
        out[k] = x
    return out, orig


def channel_means(pictures):
    """Each channel's mean, as s2s takes it: the mean over the pictures of each picture's
    own mean (in double), (3,)."""
    return pictures.double().mean(dim=(1, 2)).mean(dim=0)


def read_ground(path):
    """A .ground file: for each line, one entry per caption word, None for `-` or the box
    (x0, y0, x1, y1)."""
    lines = []
    for k, line in enumerate(read_lines(path)):
        words = []
        for field in line.split(" ") if line else []:
            if field == "-":
                words.append(None)
                continue
            try:
                box = tuple(int(v) for v in field.split(","))
            except ValueError:
                box = ()
            if len(box) != 4:
                raise ConfigError("%s:%d: expected '-' or x0,y0,x1,y1 (got '%s')"
                                  % (path, k + 1, field))
            words.append(box)
        lines.append(words)
    return lines


def ground_cells(G, box, width, height):
    """The cells (indices r G + c) of a G x G grid over a width x height picture that box
    names: those it covers by at least half of the cell's area, else the one it overlaps
    most (the first of equal ones), as grounding.c; computed in units of 1 / G pixel, so
    exactly."""
    def overlap(a0, a1, b0, b1):
        return max(min(a1, b1) - max(a0, b0), 0)
    x0, y0, x1, y1 = (v * G for v in box)
    cells, best, best_overlap = [], -1, 0
    for r in range(G):
        for c in range(G):
            o = (overlap(c * width, (c + 1) * width, x0, x1)
                 * overlap(r * height, (r + 1) * height, y0, y1))
            if 2 * o >= width * height:
                cells.append(r * G + c)
            if o > best_overlap:
                best, best_overlap = r * G + c, o
    return cells if cells or best < 0 else [best]


def attention_correctness(alpha, boxes, G, size_in_file):
    """Liu et al.'s pointing and mass for the words of one caption: alpha (T, S), the heads'
    mean weights of its teacher-forced steps (</s> last), boxes one per word (None: names
    nothing). Returns [(word's position, hit 0 or 1, mass)] for the words with a box."""
    out = []
    for i, box in enumerate(boxes):
        if box is None:
            continue
        cells = ground_cells(G, box, *size_in_file)
        row = alpha[i]
        hit = int(int(torch.argmax(row)) in cells)     # argmax: the first of equal ones
        out.append((i, hit, float(row[cells].sum())))
    return out
