"""s2s's configs read as s2s reads them: the keys the reference trains with, their
defaults and choices, and the keys it refuses or ignores."""
from reference.model import SCORES, Seq2Seq


# ---- training on real text: the `train` subcommand -----------------------------------

# The config keys the reference implements, with s2s's defaults (`s2s config --doc`). The
# type of each default is the type of the key.
CONFIG_KEYS = {
    "seed": 1,
    "data.train_src": "", "data.train_tgt": "", "data.train_tsv": "",
    "data.valid_src": "", "data.valid_tgt": "", "data.valid_tsv": "",
    "data.test_src": "", "data.test_tgt": "", "data.test_tsv": "",
    "data.tsv_reverse": False, "data.lowercase": False, "data.max_length": 50,
    "data.max_line_bytes": 1048576, "data.src_vocab_size": 0, "data.tgt_vocab_size": 0,
    "data.src_min_freq": 1, "data.tgt_min_freq": 1,
    "data.subwords": "none", "data.subword_vocab_size": 8000, "data.subword_type": "unigram",
    "data.subword_joint": True,
    "model.embedding_size": 64, "model.encoder_size": 64, "model.decoder_size": 128,
    "model.attention_size": 64, "model.readout_size": 128, "model.attention": "additive",
    "model.attention_heads": 1, "model.encoder_cell": "gru", "model.decoder_cell": "gru",
    "model.encoder_layers": 1, "model.context_gate": False, "model.embedding_dropout": 0.0,
    "model.readout_dropout": 0.0, "model.init_range": 0.1, "model.tie_output": False,
    "model.share_embeddings": False,
    "model.self_attention_layers": 0, "model.self_attention_heads": 4,
    "model.self_attention_ffn": 0, "model.self_attention_dropout": 0.1,
    "model.decoder_layers": 1,
    "model.encoder": "text", "model.conv_channels": [16, 32, 64], "model.grid_positions": True,
    "model.grid_position_sines": False,
    "data.image_size": 64, "data.image_resize": True, "data.valid_ground": "",
    "data.test_ground": "",
    "training.optimizer": "adam", "training.learning_rate": 0.001, "training.warmup_steps": -1,
    "training.adam_beta1": 0.9, "training.adam_beta2": 0.999, "training.adam_eps": 1e-8,
    "training.clip_grad_norm": 5.0, "training.label_smoothing": 0.0, "training.batch_size": 32,
    "training.batch_tokens": 0, "training.bucket_batches": 100, "training.shuffle": True,
    "training.max_steps": 0,
    "training.epochs": 10, "training.max_time": 0.0, "training.scheduling": "plateau",
    "training.patience": 3, "training.decrease_factor": 0.5, "training.learning_rate_min": 1e-6,
    "training.early_stopping": 0, "training.early_stopping_metric": "bleu",
    "training.average_last": 1, "training.valid_every": 1000, "training.log_every": 100,
    "training.max_bad_steps": 5,
    "translate.beam_size": 5, "translate.alpha": 0.6, "translate.max_output_ratio": 2.0,
    "translate.max_output_extra": 10, "translate.attention_mode": "auto",
    "translate.detokenize": True,      # read by beamcheck only: how s2s writes translations
}
# The values a choice key may take here (s2s has more for some: those are refused below).
CONFIG_CHOICES = {
    "model.attention": SCORES, "model.encoder_cell": ("gru", "lstm", "rnn", "none"),
    "model.decoder_cell": ("gru", "lstm", "rnn", "none"), "training.optimizer": ("adam",),
    "training.scheduling": ("none", "plateau", "inverse_sqrt"),
    "data.subwords": ("none", "sentencepiece"), "data.subword_type": ("unigram", "bpe"),
    "training.early_stopping_metric": ("bleu", "loss", "exact"),
    "translate.attention_mode": ("auto", "soft"), "model.encoder": ("text", "image"),
}
# Keys of s2s the reference does not implement, with their defaults: any other value is an
# error, since the model or its training would then not be the one s2s trains.
CONFIG_UNSUPPORTED = {
    "data.level": "word", "data.subword_alpha": 0.0,
    "data.subword_src_model": "", "data.subword_tgt_model": "",
    "model.attention_mode": "soft", "training.doubly_stochastic": 0.0,
    "training.attention_supervision": 0.0,
}
# Keys that change nothing the reference computes, whatever their value: where the run
# goes, threads and shards (s2s's numbers depend on its shards; the reference has none),
# the attention dumps, s2s translate's source cut (sources over 250 tokens), gold alignments
# and the training captions' boxes (read by attention supervision alone, which the
# reference's `train` does not do), and the settings of parts this model does not have
# (hard attention, Adadelta).
CONFIG_IGNORED = {
    "name", "run_dir", "training.threads", "training.shards", "translate.max_source_length",
    "data.valid_align", "data.test_align", "data.train_ground", "training.adadelta_rho",
    "training.adadelta_eps", "training.hard_reinforce_weight", "training.hard_entropy_weight",
    "training.hard_expected_prob", "training.hard_baseline_decay", "training.hard_warmup_steps",
    "training.hard_reward",
}
CONFIG_IGNORED_SECTIONS = ("alignments.",)


class ConfigError(Exception):
    pass


def _coerce(key, value, default, where):
    """value (as YAML read it) as the type of default; ConfigError naming where if not."""
    def bad():
        return ConfigError("%s: %s: expected %s, got %r" % (
            where, key, {bool: "true or false", int: "an integer", float: "a number",
                         str: "a string"}[type(default)], value))
    if isinstance(default, bool):
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value in ("true", "True", "TRUE", "false", "False", "FALSE"):
            return value.lower() == "true"
        raise bad()
    if isinstance(default, int):
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        try:
            return int(str(value))
        except ValueError:
            raise bad() from None
    if isinstance(default, list):                       # a list of integers
        if (isinstance(value, list) and value
                and all(isinstance(v, int) and not isinstance(v, bool) for v in value)):
            return list(value)
        raise ConfigError("%s: %s: expected a list of integers, got %r" % (where, key, value))
    if isinstance(default, float):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        try:   # PyYAML reads YAML 1.1, where 1e-8 (no dot) is a string
            return float(str(value))
        except ValueError:
            raise bad() from None
    return "" if value is None else str(value)


def _flatten(tree, prefix=""):
    """{section: {key: value}} -> {"section.key": value} (a dotted key may also be given
    whole at the top)."""
    flat = {}
    for key, value in (tree or {}).items():
        if isinstance(value, dict):
            flat.update(_flatten(value, prefix + str(key) + "."))
        else:
            flat[prefix + str(key)] = value
    return flat


def _known(key):
    return (key in CONFIG_KEYS or key in CONFIG_UNSUPPORTED or key in CONFIG_IGNORED
            or key.startswith(CONFIG_IGNORED_SECTIONS))


def load_config(text, where, overrides=()):
    """An s2s config (YAML text) with --set overrides ("key=value", the value read as a
    YAML scalar) -> {key: value} for every key of CONFIG_KEYS, defaults filled in. Raises
    ConfigError for an unknown key, a bad value, or a key the reference does not
    implement set to anything but its default."""
    import yaml
    try:
        tree = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ConfigError("%s: not YAML: %s" % (where, e)) from None
    if tree is not None and not isinstance(tree, dict):
        raise ConfigError("%s: expected a mapping of sections" % where)
    given = [(key, value, where) for key, value in _flatten(tree).items()]
    for assignment in overrides:
        key, eq, text_value = assignment.partition("=")
        if not eq:
            raise ConfigError("--set %s: expected KEY=VALUE" % assignment)
        default = CONFIG_KEYS.get(key, CONFIG_UNSUPPORTED.get(key))
        # a string key takes the text as it is; the others read it as YAML would
        value = text_value if isinstance(default, str) else yaml.safe_load(text_value or "''")
        given.append((key, value, "--set " + assignment))
    cfg, origin = dict(CONFIG_KEYS), {}
    for key, value, at in given:
        if not _known(key):
            raise ConfigError("%s: unknown key `%s`" % (at, key))
        if key in CONFIG_KEYS:
            cfg[key] = _coerce(key, value, CONFIG_KEYS[key], at)
            origin[key] = at
        elif key in CONFIG_UNSUPPORTED:
            if _coerce(key, value, CONFIG_UNSUPPORTED[key], at) != CONFIG_UNSUPPORTED[key]:
                raise ConfigError("%s: %s = %r: the PyTorch reference does not implement it "
                                  "(only %r), so it would not be the same model"
                                  % (at, key, value, CONFIG_UNSUPPORTED[key]))
    for key, choices in CONFIG_CHOICES.items():
        if cfg[key] not in choices:
            raise ConfigError("%s: %s = %s: the PyTorch reference implements only %s"
                              % (origin.get(key, where), key, cfg[key], ", ".join(choices)))
    positive = ("model.embedding_size", "model.encoder_size", "model.decoder_size",
                "model.attention_size", "model.readout_size", "model.attention_heads",
                "training.batch_size", "training.bucket_batches", "training.valid_every",
                "training.log_every", "training.average_last", "translate.beam_size",
                "data.max_length", "training.max_bad_steps")
    for key in positive:
        if cfg[key] < 1:
            raise ConfigError("%s: %s must be at least 1" % (where, key))
    if cfg["training.batch_tokens"] < 0:
        raise ConfigError("%s: training.batch_tokens must be at least 0" % where)
    if cfg["model.encoder_cell"] == "none" and cfg["model.self_attention_layers"] < 1:
        raise ConfigError("%s: model.encoder_cell none needs model.self_attention_layers >= 1"
                          % where)
    if not 1 <= cfg["model.decoder_layers"] <= 6:
        raise ConfigError("%s: model.decoder_layers must be 1 to 6" % where)
    if not 1 <= cfg["model.encoder_layers"] <= 4:
        raise ConfigError("%s: model.encoder_layers must be 1 to 4" % where)
    heads, n, p, a = (cfg["model." + k] for k in ("attention_heads", "encoder_size",
                                                  "decoder_size", "attention_size"))
    if cfg["model.attention"] == "dot" and p != 2 * n:
        raise ConfigError("%s: model.attention dot needs decoder_size = 2 encoder_size" % where)
    if (cfg["model.tie_output"] and not is_transformer(cfg)
            and cfg["model.readout_size"] != cfg["model.embedding_size"]):
        raise ConfigError("%s: model.tie_output needs model.readout_size = model.embedding_size"
                          % where)
    image = cfg["model.encoder"] == "image"
    if cfg["model.share_embeddings"] and (
            image or cfg["data.src_vocab_size"] != cfg["data.tgt_vocab_size"]
            or cfg["data.src_min_freq"] != cfg["data.tgt_min_freq"]
            or (cfg["data.subwords"] != "none" and not cfg["data.subword_joint"]
                and not cfg["data.subword_tgt_model"])):
        raise ConfigError("%s: model.share_embeddings needs one vocabulary of both sides' "
                          "text (as s2s's config_validate says)" % where)
    if image and cfg["data.image_size"] % 2 ** len(cfg["model.conv_channels"]):
        raise ConfigError("%s: data.image_size must be divisible by 2^(conv blocks)" % where)
    widths = ({"model.conv_channels' last (d_h)": cfg["model.conv_channels"][-1]} if image
              else {"model.encoder_size (d_h = 2n)": 2 * n})
    if cfg["model.attention"] in ("additive", "scaled_dot"):
        widths["model.attention_size"] = a
    if cfg["model.attention"] == "general":
        widths["model.decoder_size"] = p
    for name, width in widths.items():
        if cfg["model.attention"] != "none" and width % heads:
            raise ConfigError("%s: model.attention_heads %d does not divide %s"
                              % (where, heads, name))
    return cfg


def is_transformer(cfg):
    return cfg["model.decoder_cell"] == "none"


def warmup_steps(cfg):
    """training.warmup_steps, its -1 resolved as s2s resolves it (config_warmup_steps):
    200 for a model with self-attention layers or the Transformer decoder, else 0."""
    if cfg["training.warmup_steps"] >= 0:
        return cfg["training.warmup_steps"]
    return 200 if cfg["model.self_attention_layers"] > 0 or is_transformer(cfg) else 0


def config_model(cfg, vx, vy):
    """The Seq2Seq the config describes, for vocabularies of vx and vy words; its
    self-attention and Transformer layers are torch's own modules with dropout
    model.self_attention_dropout at torch's sites (active in train() mode only)."""
    m, n, p, a, l = (cfg["model." + k] for k in ("embedding_size", "encoder_size",
                                                 "decoder_size", "attention_size",
                                                 "readout_size"))
    transformer = is_transformer(cfg)
    return Seq2Seq(vx, vy, m, n, p, a, l, score=cfg["model.attention"],
                   enc_cell=cfg["model.encoder_cell"] if cfg["model.encoder_cell"] != "none"
                   else "gru",
                   dec_cell="gru" if transformer else cfg["model.decoder_cell"],
                   encoder="image" if cfg["model.encoder"] == "image" else
                   "attn" if cfg["model.encoder_cell"] == "none" else "birnn",
                   image_size=cfg["data.image_size"], conv_channels=cfg["model.conv_channels"],
                   grid_positions=(0 if not cfg["model.grid_positions"] else
                                   2 if cfg["model.grid_position_sines"] else 1),
                   enc_layers=cfg["model.encoder_layers"], heads=cfg["model.attention_heads"],
                   sa_layers=cfg["model.self_attention_layers"],
                   sa_heads=cfg["model.self_attention_heads"],
                   sa_ffn=cfg["model.self_attention_ffn"],
                   dec_layers=cfg["model.decoder_layers"] if transformer else 0,
                   dec_ffn=cfg["model.self_attention_ffn"],
                   dropout=cfg["model.self_attention_dropout"],
                   context_gate=int(cfg["model.context_gate"]),
                   tie_output=int(cfg["model.tie_output"]),
                   share_embeddings=int(cfg["model.share_embeddings"]))
