"""The `train` subcommand: trains what `s2s train CONFIG.yaml` trains, validates as it
does, and translates the test sources with s2s's beam search."""
import json
import math
import os
import random
import sys
import time

import torch

from reference.model import PAD, UNK, pad_batch
from reference.tokenizer import detokenize, tokenize
from reference.config import ConfigError, config_model, is_transformer, load_config, warmup_steps
from reference.data import Batches, build_vocab, read_pairs
from reference.search import beam_search, greedy_batch, output_limit


def run_s2s_eval(s2s, hyp, ref):
    """BLEU and exact match of hyp against ref (files of tokens), by `s2s eval` (sacreBLEU's
    numbers)."""
    import subprocess
    text = subprocess.run([s2s, "eval", "--hyp", hyp, "--ref", ref, "--metric", "bleu",
                           "--metric", "exact"], check=True, capture_output=True,
                          text=True).stdout
    scores = {}
    for line in text.splitlines():
        name, eq, rest = line.partition(" = ")
        if eq:
            scores[name.strip().lower()] = float(rest.split()[0])
    return scores["bleu"], scores["exact"]


def learn_subword_models(cfg):
    """data.subwords sentencepiece: the (source, target) SentencePieceProcessors, learned from
    the training files with s2s's options (src/text/subwords.cc: the model type and size,
    character coverage 1, one thread, the generator seeded by the config's seed), one
    model from both files when data.subword_joint, else one a side."""
    import io
    import sentencepiece as spm

    def learn(paths):
        spm.set_random_generator_seed(cfg["seed"])
        model = io.BytesIO()
        spm.SentencePieceTrainer.train(input=",".join(paths), model_type=cfg["data.subword_type"],
                                       vocab_size=cfg["data.subword_vocab_size"],
                                       character_coverage=1.0, num_threads=1, minloglevel=2,
                                       model_writer=model)
        return spm.SentencePieceProcessor(model_proto=model.getvalue())
    src, tgt = cfg["data.train_src"], cfg["data.train_tgt"]
    if not src or not tgt:
        raise ConfigError("data.subwords sentencepiece: the reference needs data.train_src and "
                          "data.train_tgt (as s2s, no TSV)")
    if cfg["data.subword_joint"]:
        both = learn([src, tgt])
        return both, both
    return learn([src]), learn([tgt])


def validation_scores(net, valid, cfg, tgt_words, s2s, out_dir, written=None, grounding=None):
    """s2s's validation (src/train/evaluator.c) of net on the pairs valid (source ids,
    target ids, target tokens, line): batches of training.batch_size in order of source length;
    the loss, the mean over every target token (</s> included) of -log P; and BLEU and
    exact match, by `s2s eval`, of the greedy translations against the references, both
    written as s2s validates them: detokenized (as s2s translate writes) unless
    translate.detokenize is false, then the tokens joined by spaces (or by `written`, the
    subword model's decoding). Writes them to out_dir/valid.hyp (the last validation's) and
    valid.ref. Returns (loss, bleu, exact). net is in eval() mode meanwhile (no dropout).
    grounding: an image corpus's word boxes (Grounding), whose pointing and mass the
    teacher-forced weights then get (its counts, added up)."""
    written = written or (detokenize if cfg["translate.detokenize"] else " ".join)
    B = cfg["training.batch_size"]
    loss = teacher_forced(net, valid, B, grounding)
    was_training = net.training
    net.eval()
    order = sorted(range(len(valid)), key=lambda k: (len(valid[k][0]), k))
    hyps = [None] * len(valid)
    with torch.no_grad():
        for first in range(0, len(order), B):
            chunk = order[first:first + B]
            out = greedy_batch(net, [valid[k][0] for k in chunk],
                               [output_limit(len(valid[k][0]), cfg) for k in chunk])
            for k, words in zip(chunk, out):
                hyps[k] = written([tgt_words[w] for w in words])
    net.train(was_training)
    ref_path, hyp_path = os.path.join(out_dir, "valid.ref"), os.path.join(out_dir, "valid.hyp")
    for path, lines in ((ref_path, [written(v[2]) for v in valid]), (hyp_path, hyps)):
        with open(path, "w", encoding="utf-8") as f:
            f.writelines(line + "\n" for line in lines)
    bleu, exact = run_s2s_eval(s2s, hyp_path, ref_path)
    return loss, bleu, exact


def teacher_forced(net, pairs, B, grounding=None):
    """The mean over every target token (</s> included) of -log P, net reading the pairs
    (source ids, target ids, target tokens, line) teacher-forced in batches of B in order of source
    length (net in eval() mode: no dropout); grounding, if given, counts their attention's
    pointing and mass."""
    was_training = net.training
    net.eval()
    order = sorted(range(len(pairs)), key=lambda k: (len(pairs[k][0]), k))
    loss_sum, tokens = 0.0, 0
    with torch.no_grad():
        for first in range(0, len(order), B):
            chunk = order[first:first + B]
            src, src_len, tgt_in, tgt_out = pad_batch([pairs[k][:2] for k in chunk])
            n = int((tgt_out != PAD).sum())
            weights = [] if grounding else None
            loss_sum += net.loss(src, src_len, tgt_in, tgt_out,
                                 alignments_out=weights).item() * n
            tokens += n
            if grounding:
                grounding.add([pairs[k][3] for k in chunk], [pairs[k][2] for k in chunk],
                              torch.stack(weights))
    net.train(was_training)
    return loss_sum / tokens


class Grounding:
    """The word boxes of a split's captions (a .ground file, line k for pair k) and the
    attention correctness counts of s2s's validation and `s2s align --ground`, kept for
    each word of the vocabulary: words with a box, hits (the most attended cell one of the
    word's), and the summed mass on them; and, when records is a list, each caption's
    weights as `s2s align --out` writes them."""

    def __init__(self, path, sizes, G):
        from reference.pictures import read_ground
        self.boxes, self.sizes, self.G = read_ground(path), sizes, G
        self.counts = {}                                # word: [words, hits, mass]
        self.records = None

    def add(self, lines, captions, weights):
        """weights (T, S, B): the teacher-forced steps of a batch of captions (lists of
        tokens), those of the split's lines numbered lines (from 0)."""
        from reference.pictures import attention_correctness
        for b, (k, caption) in enumerate(zip(lines, captions)):
            if self.records is not None:                # as `s2s align --out` writes them
                self.records.append({
                    "id": k + 1, "src": ["cell%d" % j for j in range(weights.size(1))],
                    "tgt": list(caption) + ["</s>"],
                    "weights": [[float(w) for w in row]
                                for row in weights[:len(caption) + 1, :, b]]})
            for i, hit, mass in attention_correctness(weights[:, :, b], self.boxes[k], self.G,
                                                      self.sizes[k]):
                count = self.counts.setdefault(caption[i], [0, 0, 0.0])
                count[0], count[1], count[2] = count[0] + 1, count[1] + hit, count[2] + mass

    def scores(self):
        """(pointing, mass) over every word, and zero the counts."""
        words, hits, mass = (sum(c[k] for c in self.counts.values()) for k in range(3))
        self.counts = {}
        return hits / max(words, 1), mass / max(words, 1)

    def by_word(self):
        """"word pointing/mass (count)" for each grounded word, most frequent first."""
        return ", ".join("%s %.2f/%.2f (%d)" % (w, c[1] / c[0], c[2] / c[0], c[0]) for w, c in
                         sorted(self.counts.items(), key=lambda wc: (-wc[1][0], wc[0])))


def image_sources(cfg, splits):
    """An image corpus's pictures: {split: (each picture's size in its file, its first index
    in the bank)} and the bank (all pictures, less the training pictures' channel means, as
    s2s reads them), for the splits given as {split: (list path, lines)}."""
    from reference.pictures import channel_means, load_pictures
    loaded, at, info = [], 0, {}
    for split, (path, lines) in splits.items():
        pics, sizes = load_pictures(path, lines, cfg["data.image_size"], cfg["data.image_resize"])
        info[split] = (sizes, at)
        loaded.append(pics)
        at += len(lines)
    mean = channel_means(loaded[0])                     # the training split's, first
    bank = torch.cat(loaded) - mean.float()
    return info, bank, mean


class TrainLog:
    """DIR/train.log, each line also on stdout."""

    def __init__(self, path):
        self.f = open(path, "w", encoding="utf-8")

    def __call__(self, text):
        self.f.write(text + "\n")
        self.f.flush()
        print(text, flush=True)

def dropout_mask(shape, rate):
    """Inverted dropout's mask: 0 with probability rate, else 1 / (1 - rate)."""
    keep = 1.0 - rate
    return torch.empty(shape).bernoulli_(keep).mul_(1.0 / keep)


def train(args):
    """Trains the configured model as `s2s train` does, on the same data, vocabularies,
    batches (other draws), initialisation (in distribution), loss, dropout, Adam, clipping,
    schedule, weight averaging, validation and stopping rules; keeps the best validation's
    weights; decodes the test sources with s2s's beam search. What differs is the random
    draws: torch's and Python's here, PCG32's in s2s."""
    import copy
    try:
        with open(args.config, encoding="utf-8") as f:
            cfg = load_config(f.read(), args.config, args.set or [])
        train_raw = read_pairs(cfg, "train")
        if not train_raw:
            raise ConfigError("%s: no training data (data.train_src or data.train_tsv)"
                              % args.config)
        valid_raw, test_raw = read_pairs(cfg, "valid"), read_pairs(cfg, "test")
    except (ConfigError, OSError) as e:
        print("torch_reference.py train: error: %s" % e, file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    log = TrainLog(os.path.join(args.out, "train.log"))
    lower = cfg["data.lowercase"]
    torch.manual_seed(cfg["seed"])
    rng = random.Random(cfg["seed"])
    if cfg["data.subwords"] == "sentencepiece":
        start = time.perf_counter()
        sp_src, sp_tgt = learn_subword_models(cfg)
        log("subwords: SentencePiece %s models of %d pieces learned in %.1f s%s" % (
            cfg["data.subword_type"], cfg["data.subword_vocab_size"], time.perf_counter() - start,
            ", one from both sides" if cfg["data.subword_joint"] else ", one a side"))

        def tok_src(text):
            return sp_src.encode_as_pieces(text)

        def tok(text):
            return sp_tgt.encode_as_pieces(text)

        def written(pieces):
            return sp_tgt.decode_pieces(list(pieces))
    else:
        def tok(text):
            return tokenize(text, lower)
        tok_src = tok
        written = detokenize if cfg["translate.detokenize"] else " ".join
    image, grounding = cfg["model.encoder"] == "image", {}
    if image:
        # a picture's source: its index in the bank, once per grid cell but the last
        # (pad_batch adds the </s> row), read by the model's encode()
        G = cfg["data.image_size"] // 2 ** len(cfg["model.conv_channels"])
        start = time.perf_counter()
        try:
            pictures, bank, mean = image_sources(cfg, {
                split: (cfg["data.%s_src" % split], [x for x, _ in raw]) for split, raw in
                (("train", train_raw), ("valid", valid_raw), ("test", test_raw)) if raw})
            for split in ("valid", "test"):
                if cfg["data.%s_ground" % split] and split in pictures:
                    grounding[split] = Grounding(cfg["data.%s_ground" % split],
                                                 pictures[split][0], G)
        except (ConfigError, OSError) as e:
            print("torch_reference.py train: error: %s" % e, file=sys.stderr)
            return 2
        log("pictures: %d read in %.1f s, %d x %d pixels, channel means %.4f %.4f %.4f; "
            "a %d x %d grid" % (bank.size(0), time.perf_counter() - start, cfg["data.image_size"],
                                cfg["data.image_size"], *mean.tolist(), G, G))

        def source(split, k, _):
            return [pictures[split][1] + k] * (G * G - 1)
    else:
        def source(split, k, x):
            return tok_src(x)
    # training pairs: both sides non-empty and at most max_length tokens (a caption's
    # picture has its grid's cells, whatever max_length says)
    max_len, train_tok = cfg["data.max_length"], []
    for k, (x, y) in enumerate(train_raw):
        xs, ys = source("train", k, x), tok(y)
        if xs and ys and (image or len(xs) <= max_len) and len(ys) <= max_len:
            train_tok.append((xs, ys))
    src_words = build_vocab((x for x, _ in train_tok) if not image else (),
                            cfg["data.src_vocab_size"], cfg["data.src_min_freq"])
    tgt_words = build_vocab((y for _, y in train_tok), cfg["data.tgt_vocab_size"],
                            cfg["data.tgt_min_freq"])
    if cfg["model.share_embeddings"]:                  # one vocabulary: both sides' counts,
        both = [x for x, _ in train_tok] + [y for _, y in train_tok]   # the source's first
        src_words = tgt_words = build_vocab(both, cfg["data.tgt_vocab_size"],
                                            cfg["data.tgt_min_freq"])
    src_id = {w: k for k, w in enumerate(src_words)}
    tgt_id = {w: k for k, w in enumerate(tgt_words)}

    def ids(words, vocab):
        return [vocab.get(w, UNK) for w in words]

    def src_ids(xs):                                   # a picture's source is ids already
        return xs if image else ids(xs, src_id)
    train_pairs = [(src_ids(x), ids(y, tgt_id)) for x, y in train_tok]
    # validation: every pair with both sides non-empty, however long; (source ids, target
    # ids, target tokens, line)
    valid = []
    for k, (x, y) in enumerate(valid_raw or []):
        xs, ys = source("valid", k, x), tok(y)
        if xs and ys:
            valid.append((src_ids(xs), ids(ys, tgt_id), ys, k))
    log("data: %d training pairs (of %d lines), %d validation pairs, %d test sources; "
        "vocabularies %d source, %d target words" % (len(train_pairs), len(train_raw), len(valid),
                                                     len(test_raw or []), len(src_words),
                                                     len(tgt_words)))
    if not train_pairs:
        print("torch_reference.py train: error: no usable training pairs", file=sys.stderr)
        return 2

    model = config_model(cfg, len(src_words), len(tgt_words))
    model.init_uniform(cfg["model.init_range"])
    if image:
        model.set_pictures(bank)
    params = list(model.parameters())
    if is_transformer(cfg):
        shape = "the Transformer decoder of %d layers over %s" % (
            cfg["model.decoder_layers"], "%d self-attention layers" %
            cfg["model.self_attention_layers"] if cfg["model.encoder_cell"] == "none"
            else "a %s encoder" % cfg["model.encoder_cell"])
    else:
        shape = "%s score, %s/%s cells, %d encoder layer%s" % (
            cfg["model.attention"], cfg["model.encoder_cell"], cfg["model.decoder_cell"],
            cfg["model.encoder_layers"], "s" if cfg["model.encoder_layers"] > 1 else "")
    log("model: %d parameters, %s, %d head%s; torch %s, %d torch threads, "
        "OPENBLAS_NUM_THREADS=%s" % (
            sum(w.numel() for w in params), shape, cfg["model.attention_heads"],
            "s" if cfg["model.attention_heads"] > 1 else "", torch.__version__,
            torch.get_num_threads(), os.environ.get("OPENBLAS_NUM_THREADS", "unset")))
    base_lr = cfg["training.learning_rate"]
    adam = torch.optim.Adam(params, lr=base_lr, betas=(cfg["training.adam_beta1"],
                                                       cfg["training.adam_beta2"]),
                            eps=cfg["training.adam_eps"])
    warmup = warmup_steps(cfg)
    batches = Batches(train_pairs, cfg["training.batch_size"], cfg["training.bucket_batches"],
                      cfg["training.shuffle"], rng, cfg["training.batch_tokens"])
    emb_rate, ro_rate = cfg["model.embedding_dropout"], cfg["model.readout_dropout"]
    smoothing, clip = cfg["training.label_smoothing"], cfg["training.clip_grad_norm"]
    m = cfg["model.embedding_size"]
    K_avg = cfg["training.average_last"]
    snapshots = []                                      # the last K_avg validations' weights
    evaluated = copy.deepcopy(model) if K_avg > 1 else model
    metric = cfg["training.early_stopping_metric"]

    state = {"step": 0, "lr": base_lr, "best_score": float("-inf"), "best_step": 0,
             "best": None, "best_scores": None, "stale": 0, "plateau": 0, "validated": 0,
             "seconds": 0.0, "bad": 0}
    logged = {"loss": 0.0, "steps": 0, "tokens": 0, "seconds": 0.0}

    def evaluate(net):
        return validation_scores(net, valid, cfg, tgt_words, args.s2s, args.out, written,
                                 grounding.get("valid"))

    def validate():
        start = time.perf_counter()
        state["validated"] = state["step"]
        net = model
        if K_avg > 1:                                   # the mean of the last K weights
            snapshots.append([w.detach().clone() for w in params])
            del snapshots[:-K_avg]
            with torch.no_grad():
                for w, *old in zip(evaluated.parameters(), *snapshots):
                    w.copy_((sum(x.double() for x in old) * (1.0 / len(old))).float())
            net = evaluated
        loss, bleu, exact = evaluate(net)
        score = {"bleu": bleu, "loss": -loss, "exact": exact}[metric]
        improved = score > state["best_score"]
        if improved:
            state.update(best_score=score, best_step=state["step"], stale=0, plateau=0,
                         best={k: v.clone() for k, v in net.state_dict().items()},
                         best_scores=(loss, bleu, exact))
        else:
            state["stale"] += 1
            state["plateau"] += 1
        ground = ""
        if "valid" in grounding:                        # as s2s's validation.c writes it
            ground = " valid_pointing=%.4f valid_mass=%.4f" % grounding["valid"].scores()
        log("validation step=%d valid_loss=%.4f valid_ppl=%.2f valid_bleu=%.2f valid_exact=%.2f"
            "%s time=%.1fs%s" % (state["step"], loss, math.exp(min(loss, 700)), bleu, exact,
                                 ground, time.perf_counter() - start,
                                 " (best so far)" if improved else ""))
        if (not improved and cfg["training.scheduling"] == "plateau"
                and state["plateau"] >= cfg["training.patience"]
                and state["lr"] > cfg["training.learning_rate_min"]):
            state["lr"] = max(state["lr"] * cfg["training.decrease_factor"],
                              cfg["training.learning_rate_min"])
            state["plateau"] = 0
            log("no improvement in %d validation%s: learning rate now %.4g" % (
                cfg["training.patience"], "s" if cfg["training.patience"] > 1 else "", state["lr"]))
        if 0 < cfg["training.early_stopping"] <= state["stale"]:
            log("early stopping: no improvement in %d validations (best at step %d)"
                % (state["stale"], state["best_step"]))

    def stop_reason():
        if 0 < cfg["training.early_stopping"] <= state["stale"]:
            return "early stopping"
        if 0 < cfg["training.max_steps"] <= state["step"]:
            return "reached training.max_steps"
        if cfg["training.epochs"] > 0 and batches.progress() >= cfg["training.epochs"]:
            return "reached training.epochs"
        if 0 < cfg["training.max_time"] <= state["seconds"]:
            return "reached training.max_time"
        return None

    model.train()
    while True:
        reason = stop_reason()
        if reason:
            break
        start = time.perf_counter()
        src, src_len, tgt_in, tgt_out = pad_batch(batches.next_batch())
        masks = {}
        if emb_rate > 0:
            masks["mask_x"] = dropout_mask((src.size(0), src.size(1), m), emb_rate)
            masks["mask_y"] = dropout_mask((tgt_in.size(0), tgt_in.size(1), m), emb_rate)
        n_tokens = int((tgt_out != PAD).sum())
        if ro_rate > 0:
            width = m if is_transformer(cfg) else cfg["model.readout_size"]   # t_i's width
            masks["mask_t"] = dropout_mask((n_tokens, width), ro_rate)
        adam.zero_grad(set_to_none=True)
        loss = model.loss(src, src_len, tgt_in, tgt_out, masks, smoothing)
        loss.backward()
        state["step"] += 1
        grads = [w.grad for w in params if w.grad is not None]
        norm = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads]))
        loss_value, norm_value = loss.item(), norm.item()
        if math.isfinite(loss_value) and math.isfinite(norm_value):
            state["bad"] = 0
            if clip > 0 and norm_value > clip:          # as s2s: the factor max / norm
                torch._foreach_mul_(grads, clip / norm_value)
            k = state["step"]                           # update k of the warm-up's W
            rate = state["lr"] * k / warmup if k < warmup else state["lr"]
            if k >= warmup and cfg["training.scheduling"] == "inverse_sqrt":
                rate = state["lr"] * math.sqrt(warmup / k)
            for group in adam.param_groups:
                group["lr"] = rate
            adam.step()
            logged["loss"] += loss_value
            logged["steps"] += 1
        else:
            state["bad"] += 1
            log("step=%d skipped: non-finite loss or gradient; %d in a row" % (state["step"],
                                                                               state["bad"]))
            if state["bad"] >= cfg["training.max_bad_steps"]:
                log("training diverged at step %d" % state["step"])
                return 4
        seconds = time.perf_counter() - start
        state["seconds"] += seconds
        logged["seconds"] += seconds
        logged["tokens"] += n_tokens
        if state["step"] % cfg["training.log_every"] == 0:
            mean = logged["loss"] / max(logged["steps"], 1)
            log("step=%d epoch=%.3f loss=%.4f ppl=%.2f tok/s=%.0f steps/s=%.2f lr=%.4g "
                "train_seconds=%.1f" % (state["step"], batches.progress(), mean,
                                        math.exp(min(mean, 700)),
                                        logged["tokens"] / logged["seconds"],
                                        cfg["training.log_every"] / logged["seconds"],
                                        adam.param_groups[0]["lr"], state["seconds"]))
            logged.update(loss=0.0, steps=0, tokens=0, seconds=0.0)
        if valid and state["step"] % cfg["training.valid_every"] == 0:
            validate()
    if valid and state["validated"] != state["step"]:
        validate()
    log("done: %s at step %d, epoch %.3f, %d steps, %.1f s of training (%.2f steps/s)%s" % (
        reason, state["step"], batches.progress(), state["step"], state["seconds"],
        state["step"] / max(state["seconds"], 1e-9),
        "; best validation at step %d" % state["best_step"] if valid else ""))
    if valid and state["best_step"] > 0:
        model.load_state_dict(state["best"])
    model.eval()
    result = {"steps": state["step"], "train_seconds": round(state["seconds"], 3),
              "epochs": round(batches.progress(), 4), "best_step": state["best_step"],
              "valid_bleu": state["best_scores"][1] if state["best_scores"] else None,
              "valid_loss": state["best_scores"][0] if state["best_scores"] else None}
    if test_raw is not None:
        start = time.perf_counter()
        sources = [src_ids(source("test", k, x)) for k, (x, _) in enumerate(test_raw)]
        limits = [output_limit(len(x), cfg) for x in sources]
        beam = cfg["translate.beam_size"]
        found = beam_search(model, sources, beam, cfg["translate.alpha"], limits,
                            cfg["training.batch_size"])
        # test.hyp: the tokens, joined by spaces; test.txt: what s2s translate would write
        # (detokenized unless translate.detokenize is false; with subwords, the pieces
        # decoded), for scripts that tokenize it
        hyp = os.path.join(args.out, "test.hyp")
        words = [[tgt_words[w] for w in r[0]] if r else [] for r in found]
        with open(hyp, "w", encoding="utf-8") as f:
            f.writelines(" ".join(w) + "\n" for w in words)
        txt = os.path.join(args.out, "test.txt")
        with open(txt, "w", encoding="utf-8") as f:
            f.writelines(written(w) + "\n" for w in words)
        text = "test (%s weights, %d sources, beam %d, alpha %g): %s, %.1fs" % (
            "best" if valid and state["best_step"] > 0 else "last", len(sources),
            beam, cfg["translate.alpha"], hyp, time.perf_counter() - start)
        if any(y for _, y in test_raw):
            ref = os.path.join(args.out, "test.ref")
            subwords = cfg["data.subwords"] == "sentencepiece"
            with open(ref, "w", encoding="utf-8") as f:
                f.writelines((written(tok(y)) if subwords else " ".join(tok(y))) + "\n"
                             for _, y in test_raw)
            bleu, exact = run_s2s_eval(args.s2s, txt if subwords else hyp, ref)
            text += "; test_bleu=%.2f test_exact=%.2f against %s" % (bleu, exact, ref)
            result.update(test_bleu=bleu, test_exact=exact)
        if "test" in grounding:
            # the test captions' attention, teacher-forced, as `s2s align --ground` scores it
            tests = [(sources[k], ids(tok(y), tgt_id), tok(y), k)
                     for k, (_, y) in enumerate(test_raw) if tok(y)]
            grounding["test"].records = []
            teacher_forced(model, tests, cfg["training.batch_size"], grounding["test"])
            with open(os.path.join(args.out, "test-align.jsonl"), "w", encoding="utf-8") as f:
                f.writelines(json.dumps(r) + "\n" for r in sorted(grounding["test"].records,
                                                                  key=lambda r: r["id"]))
            words = grounding["test"].by_word()
            pointing, mass = grounding["test"].scores()
            text += "; test_pointing=%.4f test_mass=%.4f (by word, pointing/mass: %s)" % (
                pointing, mass, words)
            result.update(test_pointing=pointing, test_mass=mass)
        log(text)
    print("RESULT " + json.dumps(result), flush=True)
    return 0
