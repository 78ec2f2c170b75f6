"""The s2s model in PyTorch (src/model/MODEL.md): the seq2seq module with every
score, cell, encoder and head of s2s, written on torch.nn's own modules, and the
terms of its loss."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


# s2s's special token ids (src/model/batch.h), the same on both sides.
PAD, UNK, BOS, EOS = 0, 1, 2, 3

SCORES = ("additive", "dot", "general", "scaled_dot", "none")
CELLS = {"gru": (nn.GRU, nn.GRUCell), "lstm": (nn.LSTM, nn.LSTMCell), "rnn": (nn.RNN, nn.RNNCell)}
# The Transformer decoder's dropout masks, per layer, in the order they are drawn.
DECODER_MASKS = ("mask_sp", "mask_sa", "mask_cp", "mask_ca", "mask_r", "mask_o")
# The bidirectional recurrent encoder, the attention-only one and the image encoder
# (EncoderKind's order).
ENCODERS = ("birnn", "attn", "image")


def self_attention_layer(layer, x, padding, masks):
    """What torch.nn.TransformerEncoderLayer `layer` (post-LN, relu) computes on x (S, B, d)
    with src_key_padding_mask `padding` (B, S), written out so that dropout can use
    given masks: mask_p (B, H, S, S) on the weights, mask_a (S, B, d) on the
    attention's output, mask_r (S, B, F) on the feed-forward's inner layer, mask_o
    (S, B, d) on its output. crosscheck.py checks it against the module itself."""
    S, B, d = x.shape
    H = layer.self_attn.num_heads
    attn = layer.self_attn
    q, k, v = F.linear(x, attn.in_proj_weight, attn.in_proj_bias).chunk(3, dim=-1)

    def by_head(t):                                    # (S, B, d) -> (B, H, S, d / H)
        return t.reshape(S, B, H, d // H).permute(1, 2, 0, 3)
    e = by_head(q) @ by_head(k).transpose(2, 3) / (d // H) ** 0.5
    p = torch.softmax(e.masked_fill(padding[:, None, None, :], float("-inf")), dim=-1)
    z = (p * masks["mask_p"]) @ by_head(v)              # (B, H, S, d / H)
    z = z.permute(2, 0, 1, 3).reshape(S, B, d)
    y = layer.norm1(x + attn.out_proj(z) * masks["mask_a"])
    u = torch.relu(layer.linear1(y)) * masks["mask_r"]
    return layer.norm2(y + layer.linear2(u) * masks["mask_o"])


def decoder_layer(layer, x, memory, causal, padding, masks):
    """What torch.nn.TransformerDecoderLayer `layer` (post-LN, relu) computes on x (T, B, m)
    over memory (S, B, d_h) with tgt_mask `causal` (T, T; -inf above the diagonal) and
    memory_key_padding_mask `padding` (B, S), written out so that dropout can use given
    masks: mask_sp (B, H, T, T) and mask_cp (B, H, T, S) on the two attentions' weights,
    mask_sa and mask_ca (T, B, m) on their outputs, mask_r (T, B, F) on the feed-forward's
    inner layer, mask_o (T, B, m) on its output. crosscheck.py checks it against the
    module itself."""
    T, B, m = x.shape
    H = layer.self_attn.num_heads

    def by_head(t):                                    # (L, B, m) -> (B, H, L, m / H)
        return t.reshape(t.size(0), B, H, m // H).permute(1, 2, 0, 3)

    def attend(q, k, v, blocked, mask):
        e = by_head(q) @ by_head(k).transpose(2, 3) / (m // H) ** 0.5
        p = torch.softmax(e + blocked, dim=-1)
        return ((p * mask) @ by_head(v)).permute(2, 0, 1, 3).reshape(q.size(0), B, m)

    sa = layer.self_attn
    q, k, v = F.linear(x, sa.in_proj_weight, sa.in_proj_bias).chunk(3, dim=-1)
    y1 = layer.norm1(x + sa.out_proj(attend(q, k, v, causal, masks["mask_sp"]))
                     * masks["mask_sa"])
    ca = layer.multihead_attn
    w_q, w_k, w_v = cross_weights(ca)
    b_q, b_k, b_v = ca.in_proj_bias.chunk(3)
    blocked = torch.zeros(B, 1, 1, memory.size(0), dtype=x.dtype).masked_fill(
        padding[:, None, None, :], float("-inf"))
    z = attend(F.linear(y1, w_q, b_q), F.linear(memory, w_k, b_k), F.linear(memory, w_v, b_v),
               blocked, masks["mask_cp"])
    y2 = layer.norm2(y1 + ca.out_proj(z) * masks["mask_ca"])
    u = torch.relu(layer.linear1(y2)) * masks["mask_r"]
    return layer.norm3(y2 + layer.linear2(u) * masks["mask_o"])


def in_proj_names(of, at, w, b, attn):
    """A MultiheadAttention's query, key and value weights and biases as s2s names them
    (at + w + "Q", ...): thirds of in_proj_weight, or with kdim != embed_dim its separate
    q, k and v weights."""
    weights = (of(attn.in_proj_weight).chunk(3) if attn._qkv_same_embed_dim   # of the whole
               else (of(attn.q_proj_weight), of(attn.k_proj_weight), of(attn.v_proj_weight)))
    names = dict(zip((at + w + part for part in "QKV"), weights))
    names.update(zip((at + b + part for part in "QKV"), of(attn.in_proj_bias).chunk(3)))
    return names


def named_parts(of, at, parts):
    """{at + name: of(weight)} for (name, weight) in parts."""
    return {at + name: of(w) for name, w in parts}


def take_greedy_words(logits, out, live, max_out):
    """One greedy step's words from logits (B, V): the most probable but <pad> and <s>;
    a live sentence b gets its word appended to out[b], or ends at </s> or at max_out[b]
    words. Returns the words, the next step's input."""
    logits[:, PAD] = float("-inf")
    logits[:, BOS] = float("-inf")
    words = logits.argmax(dim=1)
    for b, y in enumerate(words.tolist()):
        if live[b]:
            if y == EOS:
                live[b] = False
            else:
                out[b].append(y)
                live[b] = len(out[b]) < max_out[b]
    return words


def split_heads(t, heads):
    """(L, B, m) -> (B, heads, L, m / heads)."""
    L, B, m = t.shape
    return t.reshape(L, B, heads, m // heads).permute(1, 2, 0, 3)


def cached_decoder_step(layer, x, kv, Kc, Vc, padding, heads):
    """One decoding step of torch.nn.TransformerDecoderLayer `layer` for x (B, m), the new
    position's input: its key and value join the cache kv ([K, V], each (B, heads, t,
    m / heads) or None); the cross-attention reads Kc, Vc (B, heads, S, m / heads) with the
    source's padding (B, S) masked. Returns the layer's output (B, m)."""
    B, m = x.shape

    def attend(q, K, V, blocked):                      # q (B, m) -> (B, m)
        q = q.reshape(B, heads, 1, m // heads)
        e = q @ K.transpose(2, 3) / (m // heads) ** 0.5
        if blocked is not None:
            e = e.masked_fill(blocked[:, None, None, :], float("-inf"))
        return (torch.softmax(e, dim=-1) @ V).reshape(B, m)

    sa, ca = layer.self_attn, layer.multihead_attn
    q, k, v = F.linear(x, sa.in_proj_weight, sa.in_proj_bias).chunk(3, dim=-1)
    k, v = k.reshape(B, heads, 1, m // heads), v.reshape(B, heads, 1, m // heads)
    kv[0] = k if kv[0] is None else torch.cat([kv[0], k], dim=2)
    kv[1] = v if kv[1] is None else torch.cat([kv[1], v], dim=2)
    y1 = layer.norm1(x + sa.out_proj(attend(q, kv[0], kv[1], None)))
    w_q = cross_weights(ca)[0]
    qc = F.linear(y1, w_q, ca.in_proj_bias.chunk(3)[0])
    y2 = layer.norm2(y1 + ca.out_proj(attend(qc, Kc, Vc, padding)))
    return layer.norm3(y2 + layer.linear2(torch.relu(layer.linear1(y2))))


def cross_weights(attn):
    """A MultiheadAttention's W_Q, W_K, W_V: one in_proj_weight when its keys are as
    wide as its queries, else its separate q, k and v weights (kdim = vdim = d_h)."""
    if attn._qkv_same_embed_dim:
        return attn.in_proj_weight.chunk(3)
    return attn.q_proj_weight, attn.k_proj_weight, attn.v_proj_weight


class RecurrentSteps:
    """A recurrent decoder (soft contexts) stepping over a batch of rows, sentences or a
    beam's hypotheses: step() computes each row's logits for its previous word and moves
    its state on, as a teacher-forced step of Seq2Seq.loss(); reorder() makes row r
    continue from row parent[r]'s state (a beam's hypotheses)."""

    def __init__(self, model, src, src_len):
        self.model = model
        (self.H, self.keys, self.fixed, self.real_src, self.s,
         self.cell) = model.prepare_decoding(src, src_len)

    def repeat(self, K):
        """Each row K times, side by side: row b's copies become rows b K .. b K + K - 1."""
        def per_row(x, dim):
            return None if x is None else x.repeat_interleave(K, dim=dim)
        self.H, self.keys, self.real_src = (per_row(self.H, 1), per_row(self.keys, 1),
                                            per_row(self.real_src, 1))
        self.fixed, self.s, self.cell = (per_row(self.fixed, 0), per_row(self.s, 0),
                                         per_row(self.cell, 0))

    def step(self, prev):
        """The logits (rows, V_y) for the previous words prev (rows)."""
        logits, self.s, self.cell = self.model.step(prev, self.s, self.cell, self.H, self.keys,
                                                    self.fixed, self.real_src)
        return logits

    def reorder(self, parent):
        self.s, self.cell = self.s[parent], self.cell[parent]


class TransformerSteps:
    """A Transformer decoder stepping over a batch of rows as s2s decodes, under no_grad
    with a key/value cache: each step computes one new row per layer (its query, key and
    value; attention over the cached keys and values of the positions so far and over the
    source's, which are computed once). The interface of RecurrentSteps; reorder() reorders
    every layer's cache."""

    def __init__(self, model, src, src_len, max_steps):
        _, H = model.encode(src, src_len, {})
        self.model, self.m = model, model.m
        self.layers = model.transformer.layers
        self.heads = self.layers[0].self_attn.num_heads
        self.padding = torch.arange(H.size(0)).unsqueeze(0) >= src_len.unsqueeze(1)  # (B, S)
        self.cross = []                                # each layer's (Kc, Vc), (B, heads, S, hd)
        for layer in self.layers:
            ca = layer.multihead_attn
            _, w_k, w_v = cross_weights(ca)
            _, b_k, b_v = ca.in_proj_bias.chunk(3)
            self.cross.append((split_heads(F.linear(H, w_k, b_k), self.heads),
                               split_heads(F.linear(H, w_v, b_v), self.heads)))
        self.cache = [[None, None] for _ in self.layers]
        self.pe = positions(max_steps, self.m).to(H.dtype)
        self.i = 0                                     # the position the next step computes

    def repeat(self, K):
        """As RecurrentSteps.repeat, before the first step."""
        assert self.i == 0
        self.padding = self.padding.repeat_interleave(K, dim=0)
        self.cross = [(Kc.repeat_interleave(K, dim=0), Vc.repeat_interleave(K, dim=0))
                      for Kc, Vc in self.cross]

    def step(self, prev):
        x = self.model.E_y(prev) * self.m ** 0.5 + self.pe[self.i]
        for layer, kv, (Kc, Vc) in zip(self.layers, self.cache, self.cross):
            x = cached_decoder_step(layer, x, kv, Kc, Vc, self.padding, self.heads)
        self.i += 1
        return self.model.W_o(x)

    def reorder(self, parent):
        for kv in self.cache:
            kv[0], kv[1] = kv[0][parent], kv[1][parent]


class Seq2Seq(nn.Module):
    """RNNsearch and its variants (src/model/MODEL.md): a bidirectional recurrent encoder
    (`encoder` "birnn") of `enc_layers` layers, optionally `sa_layers` self-attention
    layers on top (torch.nn.TransformerEncoderLayer, `sa_heads` heads, feed-forward width
    `sa_ffn`, 0 for 4 d_h), s_0 = tanh(W_s bwd_h_1 + b_s) from the recurrent encoder, one
    of five attention scores with `heads` heads, a recurrent decoder on [ey_{i-1} ; c_i],
    the readout tanh(W_t [s_i ; c_i ; ey_{i-1}] + b_t) and the output layer; or `encoder`
    "attn", the attention-only encoder; or "image", the image encoder (torch.nn.Conv2d,
    ReLU and MaxPool2d blocks of `conv_channels` channels over pictures of `image_size`
    pixels, the grid of cells read row by row, `grid_positions` 1 learned, 2 the fixed
    sines of each cell's row and column (grid_sines), 0 none; s_0, an LSTM's
    c_0 and score none's context from the mean annotation, as for "attn"). Optionally
    `context_gate`, the gate beta_i on the context, for any encoder; `tie_output`, W_o
    the very parameter E_y (l = m; the model then has no W_o of its own); `share_embeddings`,
    E_x the very parameter E_y (vx = vy; no E_x of its own). Sizes as in
    MODEL.md: vx, vy, m, n, p, a, l. `dropout`: the torch layers' own, at torch's sites, in
    train() mode (training by the reference; the cross-check gives masks instead). The
    keywords are crosscheck_dump's settings, named alike."""

    def __init__(self, vx, vy, m, n, p, a, l, score="additive", enc_cell="gru",
                 dec_cell="gru", enc_layers=1, heads=1, sa_layers=0, sa_heads=4, sa_ffn=0,
                 encoder="birnn", image_size=8, conv_channels=(3, 4), grid_positions=1,
                 context_gate=0, tie_output=0, dec_layers=0, dec_ffn=0, dropout=0.0,
                 share_embeddings=0):
        super().__init__()
        assert score in SCORES and encoder in ENCODERS and enc_cell in CELLS and dec_cell in CELLS
        self.n, self.score, self.dec_cell, self.heads = n, score, dec_cell, heads
        self.attention_only = encoder == "attn"
        self.image = encoder == "image"
        self.pictures = None                          # an image model's bank (set_pictures)
        # s_0 (and an LSTM's c_0) from the mean annotation, which is score none's context
        self.from_mean = self.attention_only or self.image
        self.E_x = nn.Embedding(vx, m)                # an image model's is never read
        self.E_y = nn.Embedding(vy, m)
        self.shared = bool(share_embeddings)
        if self.shared:                               # one table, read by both sides
            assert vx == vy, "share_embeddings needs one vocabulary"
            self.E_x.weight = self.E_y.weight
        self.convs, self.grid_P, self.grid_sines = nn.ModuleList(), None, None
        if self.image:
            # conv blocks over (B, 3, N, N), torch's NCHW; a G x G grid of d_h = C_L cells
            channels = (3,) + tuple(conv_channels)
            assert image_size % 2 ** len(conv_channels) == 0
            self.convs.extend(nn.Conv2d(c_in, c_out, 3, stride=1, padding=1)
                              for c_in, c_out in zip(channels, channels[1:]))
            self.pool = nn.MaxPool2d(2, 2)
            self.encoder = None
            d_h = channels[-1]
            G = image_size // 2 ** len(conv_channels)
            if grid_positions == 1:
                self.grid_P = nn.Parameter(torch.zeros(G * G, d_h))
            elif grid_positions == 2:
                self.grid_sines = grid_sines(G, d_h)          # (G*G, d_h), float64
            self.W_s = nn.Linear(d_h, p)
            self.W_c = nn.Linear(d_h, p) if dec_cell == "lstm" else None
        elif self.attention_only:
            # positions and self-attention layers only; s_0 (and an LSTM's c_0) from the
            # mean of the annotations (MODEL.md, "Attention-only encoder")
            assert sa_layers >= 1 and m % 2 == 0
            self.encoder = None
            d_h = m
            self.W_s = nn.Linear(m, p)
            self.W_c = nn.Linear(m, p) if dec_cell == "lstm" else None
        else:
            self.encoder = CELLS[enc_cell][0](m, n, num_layers=enc_layers, bidirectional=True)
            self.W_s = nn.Linear(n, p)
            self.W_c = None
            d_h = 2 * n
        self.self_attention = nn.ModuleList(
            nn.TransformerEncoderLayer(d_h, sa_heads, sa_ffn or 4 * d_h, dropout=dropout)
            for _ in range(sa_layers))
        # The Transformer decoder (model.decoder_cell none): torch's layers, m wide, their
        # cross-attention's keys and values d_h wide; no s_0, no score, no readout layer
        # (torch.nn.TransformerDecoder itself, without a final norm: the post-norm layers
        # end on one)
        self.transformer = nn.TransformerDecoder(
            nn.TransformerDecoderLayer(m, heads, dec_ffn or 4 * m, dropout=dropout),
            dec_layers) if dec_layers else None
        for layer in self.transformer.layers if dec_layers else ():
            if d_h != m:
                layer.multihead_attn = nn.MultiheadAttention(m, heads, dropout=dropout, kdim=d_h,
                                                             vdim=d_h)
        if dec_layers:
            self.W_s = self.W_c = self.gate = None
            self.score, self.m = "transformer", m
            self.W_o = nn.Linear(m, vy)
            self.tied = bool(tie_output)
            if self.tied:
                self.W_o.weight = self.E_y.weight
            return
        if score == "additive":
            self.W_a = nn.Linear(p, a, bias=False)
            self.U_a = nn.Linear(d_h, a)              # its bias is b_a
            self.v_a = nn.Parameter(torch.zeros(a))
        elif score == "general":
            self.W_g = nn.Linear(d_h, p, bias=False)
        elif score == "scaled_dot":
            self.W_q = nn.Linear(p, a, bias=False)
            self.W_k = nn.Linear(d_h, a, bias=False)
        elif score == "dot":
            assert p == d_h, "the dot score needs p = 2n"
        # beta_i = sigmoid(w_beta . s_{i-1} + b_beta): w_beta (1, p) is its weight
        self.gate = nn.Linear(p, 1) if context_gate else None
        self.decoder = CELLS[dec_cell][1](m + d_h, p)
        self.W_t = nn.Linear(p + d_h + m, l)
        self.W_o = nn.Linear(l, vy)
        self.tied = bool(tie_output)
        if self.tied:                                 # one parameter, read twice
            assert l == m, "tie_output needs l = m"
            self.W_o.weight = self.E_y.weight

    def c_tensors(self):
        """{C tensor name: parameter}, for every parameter of this variant (a view of one
        where a C tensor is part of a torch parameter: sa1.W_Q is the first third of
        in_proj_weight)."""
        return self._c_names(lambda w: w)

    def c_grads(self):
        """{C tensor name: its gradient}, named as c_tensors() names the weights (0 for
        one the loss never read: an image model's E_x)."""
        return self._c_names(lambda w: torch.zeros_like(w) if w.grad is None else w.grad)

    def _c_names(self, of):
        """Every parameter by its C name: the embeddings, the output layer, the encoder's
        (encoder_names), then the recurrent decoder's and its attention's, or the
        Transformer decoder's (transformer_names). Each counted against parameters()."""
        names = {"E_x": of(self.E_x.weight), "E_y": of(self.E_y.weight), "b_o": of(self.W_o.bias)}
        if self.shared:                               # s2s has no E_x when shared: it is E_y
            del names["E_x"]
        if not self.tied:                             # s2s has no W_o when tied: it is E_y
            names["W_o"] = of(self.W_o.weight)
        names.update(self.encoder_names(of))
        names.update(self.transformer_names(of) if self.transformer is not None
                     else self.recurrent_decoder_names(of))
        # s2s splits in_proj into W_Q, W_K, W_V and their biases: 16 tensors of an encoder
        # layer's 12 parameters, 26 of a decoder layer's 18 (20 with kdim != m)
        decoder_layers = self.transformer.layers if self.transformer is not None else ()
        split = 4 * len(self.self_attention) + sum(26 - len(list(layer.parameters()))
                                                   for layer in decoder_layers)
        assert len(names) == len(list(self.parameters())) + split, "a parameter without its C name"
        return names

    def encoder_names(self, of):
        """The encoder's tensors by their C names: grid_P, the bi-RNN's enc_* (torch.nn's
        gate layout), conv blocks and self-attention layers (sa1.W_Q is the first third of
        in_proj_weight)."""
        names = {"grid_P": of(self.grid_P)} if self.grid_P is not None else {}
        for layer in range(self.encoder.num_layers if self.encoder else 0):
            suffix = "_l%d" % layer if layer else ""
            for side, torch_side in (("fwd", ""), ("bwd", "_reverse")):
                for c_part, torch_part in (("W_i", "weight_ih"), ("W_h", "weight_hh"),
                                           ("b_i", "bias_ih"), ("b_h", "bias_hh")):
                    names["enc_%s%s.%s" % (side, suffix, c_part)] = of(getattr(
                        self.encoder, "%s_l%d%s" % (torch_part, layer, torch_side)))
        for k, conv in enumerate(self.convs):
            # torch's (C_out, C_in, 3, 3) is s2s's (C_out, 9 C_in), column c * 9 + ky * 3 + kx
            names["conv%d.W" % (k + 1)] = of(conv.weight).flatten(1)
            names["conv%d.b" % (k + 1)] = of(conv.bias)
        for k, layer in enumerate(self.self_attention):
            names.update(in_proj_names(of, "sa%d." % (k + 1), "W_", "b_", layer.self_attn))
            names.update(named_parts(of, "sa%d." % (k + 1), (
                ("W_O", layer.self_attn.out_proj.weight), ("b_O", layer.self_attn.out_proj.bias),
                ("W_1", layer.linear1.weight), ("b_1", layer.linear1.bias),
                ("W_2", layer.linear2.weight), ("b_2", layer.linear2.bias),
                ("gamma_1", layer.norm1.weight), ("beta_1", layer.norm1.bias),
                ("gamma_2", layer.norm2.weight), ("beta_2", layer.norm2.bias))))
        return names

    def recurrent_decoder_names(self, of):
        """W_s (and W_c), the score's, the gate's, the cell's and the readout's."""
        names = {"W_s": self.W_s.weight, "b_s": self.W_s.bias,
                 "dec.W_i": self.decoder.weight_ih, "dec.W_h": self.decoder.weight_hh,
                 "dec.b_i": self.decoder.bias_ih, "dec.b_h": self.decoder.bias_hh,
                 "W_t": self.W_t.weight, "b_t": self.W_t.bias}
        if self.W_c is not None:
            names.update({"W_c": self.W_c.weight, "b_c": self.W_c.bias})
        if self.gate is not None:
            names.update({"w_beta": self.gate.weight, "b_beta": self.gate.bias})
        if self.score == "additive":
            names.update({"W_a": self.W_a.weight, "U_a": self.U_a.weight, "b_a": self.U_a.bias,
                          "v_a": self.v_a})
        elif self.score == "general":
            names["W_g"] = self.W_g.weight
        elif self.score == "scaled_dot":
            names.update({"W_q": self.W_q.weight, "W_k": self.W_k.weight})
        return {name: of(w) for name, w in names.items()}

    def transformer_names(self, of):
        """Each decoder layer's decK.* (torch's order: self_attn, multihead_attn, linear1,
        linear2, norm1-3)."""
        names = {}
        for k, layer in enumerate(self.transformer.layers):
            at, sa, ca = "dec%d." % (k + 1), layer.self_attn, layer.multihead_attn
            names.update(in_proj_names(of, at, "W_", "b_", sa))
            names.update(in_proj_names(of, at, "Wc_", "bc_", ca))
            names.update(named_parts(of, at, (
                ("W_O", sa.out_proj.weight), ("b_O", sa.out_proj.bias),
                ("Wc_O", ca.out_proj.weight), ("bc_O", ca.out_proj.bias),
                ("W_1", layer.linear1.weight), ("b_1", layer.linear1.bias),
                ("W_2", layer.linear2.weight), ("b_2", layer.linear2.bias),
                ("gamma_1", layer.norm1.weight), ("beta_1", layer.norm1.bias),
                ("gamma_2", layer.norm2.weight), ("beta_2", layer.norm2.bias),
                ("gamma_3", layer.norm3.weight), ("beta_3", layer.norm3.bias))))
        return names

    def decode_transformer(self, H, src_len, tgt_in, masks):
        """The Transformer decoder (MODEL.md, "Transformer decoder") over the annotations
        H (S, B, d_h): X = sqrt(m) ey' + PE, then the layers, torch's own modules (as one
        torch.nn.TransformerDecoder's) or with given dropout masks their written-out form;
        returns the last layer's output (T, B, m)."""
        T, m = tgt_in.size(0), self.m
        ey = self.E_y(tgt_in)
        if "mask_y" in masks:
            ey = ey * masks["mask_y"]
        x = ey * m ** 0.5 + positions(T, m).to(ey.dtype).unsqueeze(1)
        causal = nn.Transformer.generate_square_subsequent_mask(T).to(x.dtype)
        padding = torch.arange(H.size(0)).unsqueeze(0) >= src_len.unsqueeze(1)   # (B, S)
        if "dec1.mask_sp" not in masks:
            return self.transformer(x, H, tgt_mask=causal, memory_key_padding_mask=padding)
        for k, layer in enumerate(self.transformer.layers):
            at = "dec%d." % (k + 1)
            x = decoder_layer(layer, x, H, causal, padding,
                              {n: masks[at + n] for n in DECODER_MASKS})
        return x

    def init_uniform(self, scale=0.1):
        """MODEL.md's initialisation in distribution (not in values: s2s draws from
        PCG32): weights uniform in [-scale, scale], biases 0, layer norms' gains 1."""
        with torch.no_grad():
            for name, w in self.c_tensors().items():
                part = name.split(".")[-1]
                if part.startswith("b_") or part.startswith("beta_") or part == "b":
                    w.zero_()
                elif part.startswith("gamma_"):
                    w.fill_(1)
                else:
                    w.uniform_(-scale, scale)

    def encode(self, src, src_len, masks, pixels=None):
        """src (S, B), src_len (B) -> the recurrent encoder's output (S, B, 2n), 0 at
        padding, and the annotations H: that output through the self-attention layers
        (torch's own modules, or with given dropout masks their written-out form).
        An image model reads pixels (B, N, N, 3) instead (see grid_cells), or when none
        are given, its bank's (set_pictures): picture src[0, b] for sentence b, so that
        decoding, greedy and beam, takes a picture's index as its source."""
        if self.image:
            if pixels is None:                         # the bank's pictures src[0, b]
                pixels = self.pictures[src[0]]
            top = self.grid_cells(pixels)
            return top, self.self_attend(top, src_len, masks)
        ex = self.E_x(src)
        if "mask_x" in masks:                          # embedding dropout
            ex = ex * masks["mask_x"]
        if self.attention_only:                        # X = sqrt(m) ex + PE
            pe = positions(src.size(0), ex.size(2)).to(ex.dtype)
            top = ex * ex.size(2) ** 0.5 + pe.unsqueeze(1)
        else:
            packed = pack_padded_sequence(ex, src_len, enforce_sorted=False)
            top, _ = pad_packed_sequence(self.encoder(packed)[0], total_length=src.size(0))
        return top, self.self_attend(top, src_len, masks)

    def set_pictures(self, pictures):
        """The pictures (n, N, N, 3), less the channel means, that an image model's
        sources name by index (see encode)."""
        self.pictures = pictures

    def grid_cells(self, pixels):
        """The image encoder (MODEL.md, "Image encoder") up to the self-attention layers:
        pixels (B, N, N, 3), channels last as s2s holds them, through the conv blocks
        maxpool(relu(conv(X))) in torch's NCHW, then the last block's G x G grid read row
        by row -- cell j = r G + c -- with its learned position: (S = G^2, B, d_h)."""
        # (B, 3, N, N), made contiguous: the permuted view has channels-last strides,
        # which would send conv and pooling down torch's channels-last kernels
        x = pixels.permute(0, 3, 1, 2).contiguous()
        for conv in self.convs:
            x = self.pool(F.relu(conv(x)))
        B, d_h, G, _ = x.shape
        cells = x.permute(2, 3, 0, 1).reshape(G * G, B, d_h)   # [r, c, b] -> [r G + c, b]
        if self.grid_sines is not None:
            return cells + self.grid_sines.to(cells.dtype).unsqueeze(1)
        return cells if self.grid_P is None else cells + self.grid_P.unsqueeze(1)

    def self_attend(self, top, src_len, masks):
        """The self-attention layers (none: top itself) on top (S, B, d_h)."""
        padding = torch.arange(top.size(0)).unsqueeze(0) >= src_len.unsqueeze(1)  # (B, S)
        H = top
        for k, layer in enumerate(self.self_attention):
            at = "sa%d." % (k + 1)
            if at + "mask_p" in masks:
                H = self_attention_layer(layer, H, padding,
                                         {m: masks[at + m] for m in ("mask_p", "mask_a",
                                                                     "mask_r", "mask_o")})
            else:
                H = layer(H, src_key_padding_mask=padding)
        return H

    def scores(self, s_prev, H, keys):
        """e (heads, S, B) of one decoder step: s_prev (B, p), keys from source_keys().
        Head k scores slice k of each vector it reads (MODEL.md, "Multi-head attention")."""
        def split(x):                                  # (..., w) -> (heads, ..., w / heads)
            return torch.stack(x.chunk(self.heads, dim=-1))
        if self.score == "additive":
            return (split(torch.tanh(keys + self.W_a(s_prev))) * split(self.v_a)[:, None, None]).sum(3)
        if self.score == "dot":
            return (split(H) * split(s_prev)[:, None]).sum(3)
        if self.score == "general":
            return (split(keys) * split(s_prev)[:, None]).sum(3)
        q = self.W_q(s_prev)                           # scaled_dot
        return (split(keys) * split(q)[:, None]).sum(3) / (keys.size(2) / self.heads) ** 0.5

    def attend(self, e, H, real_src):
        """The heads' weights (heads, S, B) and the context [c^1 ; ... ; c^H] (B, 2n)."""
        alpha = torch.softmax(e.masked_fill(~real_src, float("-inf")), dim=1)
        values = torch.stack(H.chunk(self.heads, dim=2))            # (heads, S, B, 2n / heads)
        return alpha, torch.cat(list((alpha.unsqueeze(3) * values).sum(1)), dim=1)

    def choose(self, alpha, c, H, real_src, chosen, choosing):
        """Hard attention's step (MODEL.md, "Hard attention") on the rows where choosing
        (B) is true: head k's slice of the context is the annotation slice h_j[k] at its
        given position j = chosen[b, k] (chosen (B, heads)) instead of the expected one in
        c (B, 2n). Also returns, per row, sum_k log alpha^k at its position and the
        heads' summed entropy (each 0 where the row does not choose). The rows that do not
        choose keep c as it is, bit for bit."""
        head = torch.arange(self.heads).unsqueeze(1)
        row = torch.arange(real_src.size(1)).unsqueeze(0)
        # (heads, B); rows without a position (-1) read position 0, always real (</s> at
        # least), so that their discarded log alpha is finite: a NaN or an infinity there
        # would reach the gradient through where's other branch as 0 * inf
        j = chosen.clamp(min=0).T
        values = torch.stack(H.chunk(self.heads, dim=2))            # (heads, S, B, 2n / heads)
        picked = torch.cat(list(values[head, j, row]), dim=1)      # (B, 2n)
        c = torch.where(choosing.unsqueeze(1), picked, c)
        log_path = torch.log(alpha[head, j, row]).sum(0)
        # log alpha where alpha is 0 (padding) would be -inf, and 0 * -inf a NaN in both
        # directions; the padding's terms are 0, as MODEL.md's sum over real positions
        log_alpha = torch.log(torch.where(real_src, alpha, torch.ones_like(alpha)))
        entropy = -(alpha * log_alpha).sum(dim=(0, 1))
        zero = torch.zeros_like(log_path)
        return c, torch.where(choosing, log_path, zero), torch.where(choosing, entropy, zero)

    def initial_state(self, top, H, src_len):
        """s_0 and an LSTM decoder's c_0 (0 for the recurrent encoder), (B, p) each."""
        if self.from_mean:                             # the mean annotation
            init = real_mean(H, src_len)
            s = torch.tanh(self.W_s(init))
            cell = torch.tanh(self.W_c(init)) if self.W_c is not None else torch.zeros_like(s)
        else:
            s = torch.tanh(self.W_s(top[0, :, self.n:]))   # from bwd_h_1
            cell = torch.zeros_like(s)
        return s, cell

    def greedy(self, src, src_len, max_out):
        """s2s's greedy decoding (decode_greedy, s2s translate --beam 1) of a source
        batch: at each step the most probable word other than <pad> and <s> (the first of
        equal ones); sentence b stops at </s> or after max_out[b] words. Every sentence of
        the batch steps until the last stops. Returns the words of each (without </s>)."""
        with torch.no_grad():
            steps = self.decoding(src, src_len, max(max_out) + 1)
            B = src.size(1)
            prev = torch.full((B,), BOS, dtype=torch.long)
            out, live = [[] for _ in range(B)], [max_out[b] > 0 for b in range(B)]
            while any(live):
                prev = take_greedy_words(steps.step(prev), out, live, max_out)
            return out

    def decoding(self, src, src_len, max_steps):
        """The decoder's state over a padded source batch, ready to step (RecurrentSteps,
        or TransformerSteps for a Transformer decoder), for at most max_steps steps."""
        if self.transformer is not None:
            return TransformerSteps(self, src, src_len, max_steps)
        return RecurrentSteps(self, src, src_len)

    def prepare_decoding(self, src, src_len):
        """What step() reads of a padded source batch: the annotations, the keys, score
        none's context, the real positions, and s_0 (and c_0)."""
        real_src = torch.arange(src.size(0)).unsqueeze(1) < src_len.unsqueeze(0)
        top, H = self.encode(src, src_len, {})
        s, cell = self.initial_state(top, H, src_len)
        keys = self.source_keys(H)
        fixed = (self.fixed_context(H if self.from_mean else top, src_len)
                 if self.score == "none" else None)
        return H, keys, fixed, real_src, s, cell

    def step(self, prev, s, cell, H, keys, fixed, real_src):
        """One decoding step of soft attention for a batch of rows (sentences, or beam
        hypotheses): from y_{i-1} = prev (B), s_{i-1} and an LSTM's cell state (B, p),
        over the annotations H (S, B, d_h), their keys (source_keys), score none's fixed
        context (else None) and the real positions real_src (S, B), to the logits o_i
        (B, V_y), s_i and the cell state. What a teacher-forced step of loss() computes."""
        ey = self.E_y(prev)
        c = fixed if fixed is not None else self.attend(self.scores(s, H, keys), H, real_src)[1]
        if self.gate is not None:
            c = torch.sigmoid(self.gate(s)) * c
        x = torch.cat([ey, c], dim=1)
        if self.dec_cell == "lstm":
            s, cell = self.decoder(x, (s, cell))
        else:
            s = self.decoder(x, s)
        t = torch.tanh(self.W_t(torch.cat([s, c, ey], dim=1)))
        return self.W_o(t), s, cell

    def source_keys(self, H):
        """The part of the score that depends on h_j only: once per batch."""
        return {"additive": lambda: self.U_a(H), "general": lambda: self.W_g(H),
                "scaled_dot": lambda: self.W_k(H)}.get(self.score, lambda: None)()

    def fixed_context(self, H, src_len):
        """Score none: [fwd_h at the last real position ; bwd_h at the first] (B, 2n);
        for the attention-only and the image encoder, the mean of H over the real
        positions (an image's: every cell)."""
        if self.from_mean:
            return real_mean(H, src_len)
        last = H[src_len - 1, torch.arange(H.size(1)), :self.n]
        return torch.cat([last, H[0, :, self.n:]], dim=1)

    def loss(self, src, src_len, tgt_in, tgt_out, masks=None, smoothing=0.0, hard=None,
             pixels=None, doubly_stochastic=0.0, supervision=0.0, ground=None,
             alignments_out=None):
        """Token-mean cross-entropy over the real target tokens (label-smoothed as
        torch's cross_entropy does it). masks: dropout's masks (draw_training_masks), mask_x
        (S, B, m), mask_y (T, B, m), mask_t (N, l) and the self-attention layers' (see
        encode), each optional. hard: a HardPass, for hard attention's surrogate J on
        the positions it gives instead. pixels: an image model's pictures (B, N, N, 3);
        src then holds a token per cell, src_len S for each. doubly_stochastic: lambda of
        the doubly stochastic term (see doubly_stochastic_term), added to either;
        supervision: lambda of attention supervision on the word cells ground (T, B, S)
        (see attention_supervision_term), added likewise. alignments_out, a list, gets
        each step's weights (S, B), the heads' mean (a recurrent decoder's)."""
        masks = masks or {}
        real = tgt_out != PAD                          # the loss's positions, (T, B)
        if self.transformer is not None:
            _, H = self.encode(src, src_len, masks, pixels)
            t = self.decode_transformer(H, src_len, tgt_in, masks)[real]
            if "mask_t" in masks:
                t = t * masks["mask_t"]
            return F.cross_entropy(self.W_o(t), tgt_out[real], label_smoothing=smoothing)
        if hard is not None:
            assert self.score != "none", "hard attention chooses by the weights"
            choosing = real & hard.rows.unsqueeze(0)   # (T, B): the steps that choose
            log_paths, entropies = [], []
        S = src.size(0)
        real_src = torch.arange(S).unsqueeze(1) < src_len.unsqueeze(0)   # (S, B)
        top, H = self.encode(src, src_len, masks, pixels)
        s, cell = self.initial_state(top, H, src_len)
        keys = self.source_keys(H)
        fixed = (self.fixed_context(H if self.from_mean else top, src_len)
                 if self.score == "none" else None)
        ey = self.E_y(tgt_in)
        if "mask_y" in masks:
            ey = ey * masks["mask_y"]
        states, contexts, alignments = [], [], []
        for i in range(tgt_in.size(0)):
            if fixed is not None:
                c = fixed
            else:
                alpha, c = self.attend(self.scores(s, H, keys), H, real_src)
                alignments.append(alpha.mean(0))       # the heads' mean, (S, B)
                if hard is not None:
                    c, log_path, entropy = self.choose(alpha, c, H, real_src, hard.chosen[i],
                                                       choosing[i])
                    log_paths.append(log_path)
                    entropies.append(entropy)
            if self.gate is not None:                  # beta_i c_i, beta_i from s_{i-1}
                c = torch.sigmoid(self.gate(s)) * c
            x = torch.cat([ey[i], c], dim=1)
            if self.dec_cell == "lstm":
                s, cell = self.decoder(x, (s, cell))
            else:
                s = self.decoder(x, s)
            states.append(s)
            contexts.append(c)
        if alignments_out is not None:
            alignments_out.extend(alignments)
        ro_in = torch.cat([torch.stack(states)[real], torch.stack(contexts)[real], ey[real]], 1)
        t = torch.tanh(self.W_t(ro_in))
        if "mask_t" in masks:
            t = t * masks["mask_t"]
        if hard is None:
            objective = F.cross_entropy(self.W_o(t), tgt_out[real], label_smoothing=smoothing)
        else:
            objective = hard.surrogate(self.W_o(t), tgt_out, real, torch.stack(log_paths),
                                       torch.stack(entropies), smoothing)
        if doubly_stochastic:
            assert alignments, "the doubly stochastic term sums attention weights"
            objective = objective + doubly_stochastic * doubly_stochastic_term(
                torch.stack(alignments), real, real_src)
        if supervision:
            assert alignments, "attention supervision reads the attention weights"
            objective = objective + supervision * attention_supervision_term(
                torch.stack(alignments), ground, real)
        return objective


def attention_supervision_term(alpha, ground, real):
    """Attention supervision without its lambda (MODEL.md, "Image encoder"; Liu et al.
    2017): (1/N) sum over the words (i, b) with a cell in ground (T, B, S, 0 or 1) of
    -log of alpha's weight on those cells (alpha (T, S, B), the heads' mean; at least
    1e-30), N the real target positions (real (T, B))."""
    cells = ground.permute(0, 2, 1).to(alpha.dtype)                   # (T, S, B)
    mass = (alpha * cells).sum(1).clamp_min(1e-30)                     # (T, B)
    named = (cells.sum(1) > 0) & real
    return -torch.log(mass[named]).sum() / real.sum()


def doubly_stochastic_term(alpha, real, real_src):
    """Xu et al.'s doubly stochastic penalty without its lambda (MODEL.md, "Image
    encoder"): (1/B) sum over the captions b of sum over b's real source positions j of
    (1 - A_jb)^2, where A_jb sums alpha (T, S, B), the heads' mean, over b's real target
    steps (real (T, B), </s> included). real_src (S, B): the real source positions."""
    A = (alpha * real.unsqueeze(1).to(alpha.dtype)).sum(0)             # (S, B)
    gap = torch.where(real_src, 1 - A, torch.zeros_like(A))
    return (gap ** 2).sum() / alpha.size(2)


class HardPass:
    """What a hard pass needs besides the weights and the batch: which sentences chose
    positions, rows (B, bool); each head's position, chosen (T, B, heads), read only
    where a sentence that chose has a real target step; and the surrogate's settings
    (MODEL.md, "Hard attention"): lambda_r, lambda_e, the reward (sentence, or token),
    the baselines b and b_tok."""

    def __init__(self, rows, chosen, reinforce_weight, entropy_weight, token_reward,
                 baseline, token_baseline):
        self.rows, self.chosen = rows, chosen
        self.reinforce_weight, self.entropy_weight = reinforce_weight, entropy_weight
        self.token_reward = token_reward
        self.baseline, self.token_baseline = baseline, token_baseline

    def surrogate(self, logits, tgt_out, real, log_path, entropy, smoothing):
        """J = (1/N) sum_s [ CE_s - lambda_r A_s log p(path_s) - lambda_e H_s ] from the
        logits (N, V) of the real positions real (T, B) in (step, sentence) order, each
        step's log p(path) and entropy (T, B) (0 where no position was chosen). CE_s is
        label-smoothed as trained; the rewards are the unsmoothed log p(y_i), and the
        advantages (R_s - b, or r_i = log p(y_i) - b_tok per token) are constants."""
        y = tgt_out[real]
        ce = F.cross_entropy(logits, y, label_smoothing=smoothing, reduction="sum")
        log_p = torch.zeros(real.shape, dtype=logits.dtype)
        log_p[real] = -F.cross_entropy(logits.detach(), y, reduction="none")
        if self.token_reward:
            advantage = log_p - self.token_baseline
        else:
            advantage = (log_p.sum(0) - self.baseline).expand_as(log_p)
        # log_path is 0 off the choosing steps: the advantage counts only where it is not
        reinforce = (advantage * log_path).sum()
        penalty = self.reinforce_weight * reinforce + self.entropy_weight * entropy.sum()
        return (ce - penalty) / y.numel()


def positions(S, m):
    """The sinusoidal positions (S, m) of Vaswani et al.: PE[j, 2t] = sin(j / 10000^(2t/m)),
    PE[j, 2t+1] = cos(the same), in float64."""
    j = torch.arange(S, dtype=torch.float64).unsqueeze(1)
    rate = 10000.0 ** (torch.arange(0, m, 2, dtype=torch.float64) / m)
    pe = torch.zeros(S, m, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(j / rate)
    pe[:, 1::2] = torch.cos(j / rate)
    return pe


def grid_sines(G, d_h):
    """The image encoder's fixed positions (G*G, d_h), cell r G + c: the sinusoidal
    positions of row r at width w = d_h // 2 (entry 2t sin(r / 10000^(2t/w)), 2t+1 its
    cos), then those of column c at width d_h - w; in float64."""
    def axis(width):
        u = torch.arange(width)
        rate = 10000.0 ** ((u - u % 2).to(torch.float64) / width)
        angle = torch.arange(G, dtype=torch.float64).unsqueeze(1) / rate
        return torch.where(u % 2 == 1, torch.cos(angle), torch.sin(angle))
    rows, cols = axis(d_h // 2), axis(d_h - d_h // 2)
    return torch.cat([rows.repeat_interleave(G, 0), cols.repeat(G, 1)], 1)


def real_mean(H, src_len):
    """The mean of H (S, B, w) over each sentence's real positions: (B, w)."""
    real = (torch.arange(H.size(0)).unsqueeze(1) < src_len.unsqueeze(0)).to(H.dtype)
    return (H * real.unsqueeze(2)).sum(0) / src_len.to(H.dtype).unsqueeze(1)


def pad_batch(pairs):
    """Sentence pairs of ids (without </s>) -> (src, src_len, tgt_in, tgt_out), time-major,
    as s2s's batches: source + </s>, decoder input <s> + target, output target + </s>."""
    S = 1 + max(len(x) for x, _ in pairs)
    T = 1 + max(len(y) for _, y in pairs)
    src = torch.full((S, len(pairs)), PAD, dtype=torch.long)
    tgt_in = torch.full((T, len(pairs)), PAD, dtype=torch.long)
    tgt_out = torch.full((T, len(pairs)), PAD, dtype=torch.long)
    for b, (x, y) in enumerate(pairs):
        src[:len(x) + 1, b] = torch.tensor(list(x) + [EOS])
        tgt_in[:len(y) + 1, b] = torch.tensor([BOS] + list(y))
        tgt_out[:len(y) + 1, b] = torch.tensor(list(y) + [EOS])
    src_len = torch.tensor([len(x) + 1 for x, _ in pairs])
    return src, src_len, tgt_in, tgt_out
