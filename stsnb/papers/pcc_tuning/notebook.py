"""Notebook 10's plumbing, so its cells show the method: the inputs read from the parameters (:func:`load_inputs`),
the runs of its Sections 3-4 (:meth:`Inputs.plans`, :meth:`Inputs.job`), the results of every run gathered per
template and seed (:class:`Results`), each stage beside Tables 2 and 4 (:func:`beside_the_paper`) and the stage
claims (:func:`stage_claims`)."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ... import data as stsdata
from ...evaluation import evaluate, main_claims
from ...models import loading as models
from ...training import batching
from . import claims, corpora, pipeline, protocol, transfer
from .prompts import TEMPLATE_NAMES
from .reported import REPORTED

# the contrastive ceilings drawn beside each stage (notebook 00): the paper's Eq. 7, and the same bound with ties
# counted as Spearman counts them; the labels are the keys of metrics.json's "ceiling_crossings"
LIMITS = {"87.5 (Eq. 7)": 87.5, "100 sqrt(3)/2 (ties)": 100 * 3**0.5 / 2}


@dataclass
class Inputs:
    """What every run of the notebook shares: the parameters, each seed's triplets, stage 2's pairs (all, and
    without those shared with a test set), the dev pairs, the test pairs every model is scored on, the adapter
    settings and the training protocol."""

    params: dict[str, Any]
    triplets: dict[int, list[stsdata.Triplet]]
    stage2_all: corpora.Stage2Data
    stage2_clean: corpora.Stage2Data
    dev: list[stsdata.STSPair]
    scoring: evaluate.EvalPairs
    lora: models.LoraSettings
    protocol: protocol.Protocol

    @property
    def preprocess(self):
        """What every test and dev sentence goes through before encoding (the official text fixes, or None)."""
        return self.scoring.preprocess

    def overlap(self) -> tuple[int, int]:
        """(stage-2 pairs shared with a test set, stage-2 pairs)."""
        return self.stage2_clean.overlap()

    def overlap_metrics(self) -> dict[str, Any]:
        shared, total = self.overlap()
        return {"shared": shared, "total": total, "by_dataset": self.stage2_clean.removed}

    def lines(self) -> list[str]:
        """What the setup prints: the data of both stages, the overlap, selection and scoring, the protocol."""
        p = self.params
        shared, total = self.overlap()
        fixes = "the official text fixes" if self.preprocess is not None else "no text fixes"
        return [
            f"stage 1: {len(self.triplets[p['training_seeds'][0]])} triplets per seed from {p['nli_source']!r}",
            f"stage 2: {total} STS-B + SICK-R train pairs {self.stage2_all.before}; {shared} of them "
            f"({shared / total:.1%}) appear verbatim in a test set of the seven tasks (either order, raw text; "
            f"{self.stage2_clean.removed}), {len(self.stage2_clean.pairs)} do not",
            f"selection on {len(self.dev)} STS-B dev pairs; scores on {self.scoring.scope()}; training seeds "
            f"{p['training_seeds']}",
            f"text: test and dev sentences with {fixes}; stage 2 trains on its {p['stage2_text']!r} form; "
            f"4-bit runs scored on {'the unquantized base' if p['score_unquantized'] else 'their 4-bit base'}",
            batching.processes_line(p["num_processes"], self.protocol.num_processes)
            + "; every batch below is global, shared out over them",
            self.protocol.describe(p["templates"]),
        ]

    def stage2_form(self, pairs: Sequence[stsdata.STSPair]) -> list[stsdata.STSPair]:
        """Stage-2 pairs (drawn from the original text) in the form stage 2 trains on (``stage2_text``)."""
        return protocol.stage2_text_form(pairs, self.params["stage2_text"], self.preprocess)

    def arms(self) -> dict[int, corpora.Arms]:
        """Each seed's de-duplication arms (with ``dedup_study``) in stage 2's text form."""
        p = self.params
        if not p["dedup_study"]:
            return {}
        n = p["dedup_pairs"] or p["stage2_pairs"]
        out = {}
        for s in p["training_seeds"]:
            arms = corpora.matched_arms(self.stage2_all, self.stage2_clean, n, s)
            out[s] = corpora.Arms(self.stage2_form(arms.kept), self.stage2_form(arms.removed), arms.shared_in_kept)
        return out

    def stage2_pairs(self, seed: int) -> list[stsdata.STSPair]:
        """Stage 2's pairs on training seed ``seed`` (its own draw of ``stage2_pairs``), in the form stage 2 trains
        on: the pairs of that seed's main stage-2 run (the main claim's)."""
        return self.stage2_form(stsdata.sample(self.stage2_all.pairs, self.params["stage2_pairs"], seed))

    def first_batch(self, n: int) -> list[stsdata.STSPair]:
        """The first ``n`` stage-2 pairs of the first training seed: a real batch for one step of Eq. 9 by hand."""
        if n < 3:
            raise ValueError(f"a Pearson correlation needs at least 3 pairs, got n={n}")
        return self.stage2_pairs(self.params["training_seeds"][0])[:n]

    def plans(self, arms: Mapping[int, corpora.Arms]) -> list[pipeline.SeedPlan]:
        """The runs of the notebook (``pipeline.plan``) with this protocol's configurations and batch sizes."""
        p = self.params
        return pipeline.plan(
            p["templates"],
            p["training_seeds"],
            self.stage2_pairs,
            lambda template, batch, seed, pairs: self.protocol.stage2_config(template, batch, pairs, seed),
            self.protocol.batch_sizes,
            arms_of=arms.get if p["dedup_study"] else None,
            control_positive_score=p["control_positive_score"] if p["control_study"] else None,
        )

    def transfer_splits(self) -> tuple | None:
        """SICK-E's train, trial (dev) and test samples for the Table 6 probe, through the text fixes (the official
        evaluation applies them to every sentence it encodes), or None without ``transfer_pairs``."""
        p = self.params
        if not p["transfer_pairs"]:
            return None
        fix = self.preprocess or (lambda s: s)
        return tuple(
            [transfer.Labelled(fix(e.text), e.label, None if e.text2 is None else fix(e.text2)) for e in examples]
            for examples in (
                transfer.sick_entailment(split, n, p["seed"])
                for split, n in zip(("train", "trial", "test"), p["transfer_pairs"], strict=True)
            )
        )

    def job(self, plan: pipeline.SeedPlan, splits: tuple | None) -> functools.partial:
        """One ``pipeline.run_template`` call for ``plan`` (a picklable job for ``stsnb.training.distributed.run``)."""
        p = self.params
        stage1_cutoff, stage2_cutoff = self.protocol.cutoffs(plan.template)
        triplets = self.triplets[plan.seed]
        return functools.partial(
            pipeline.run_template,
            p["backbone"],
            plan.template,
            triplets,
            plan.variants,
            self.protocol.stage1_config(plan.template, len(triplets), plan.seed),
            self.dev,
            self.scoring,
            lora=self.lora,
            quantize_4bit=p["quantize_4bit"],
            gradient_checkpointing=p["gradient_checkpointing"],
            max_length=p["max_length"],
            stage1_cutoff=stage1_cutoff,
            stage2_cutoff=stage2_cutoff,
            temperature=p["temperature"],
            transfer_splits=splits if plan.probe else None,
            score_untrained=plan.score_untrained,
            score_unquantized=p["score_unquantized"],
        )


def load_inputs(params: Mapping[str, Any]) -> Inputs:
    """The notebook's inputs from its parameters; fails at once when the backbone's weights are out of reach."""
    p = dict(params)
    models.resolve(p["backbone"])  # nothing is substituted
    preprocess = protocol.eval_preprocess(p["eval_text_fixes"])
    dev = stsdata.selection_and_gate(list(stsdata.load_stsb("dev")), p["dev_pairs"], p.get("gate_pairs"), p["seed"])
    return Inputs(
        params=p,
        triplets={
            s: list(corpora.stage1_triplets(p["nli_source"], p["stage1_triplets"], s)) for s in p["training_seeds"]
        },
        stage2_all=corpora.stage2_pairs(dedup=False),
        stage2_clean=corpora.stage2_pairs(dedup=True),
        dev=stsdata.GatedSelection(protocol.fix_pairs(dev, preprocess), protocol.fix_pairs(dev.gate, preprocess)),
        scoring=evaluate.EvalPairs(p["eval_tasks"], p["eval_max_pairs"], p["eval_seed"], preprocess),
        lora=models.LoraSettings(r=p["lora_r"], alpha=p["lora_alpha"], dropout=p["lora_dropout"]),
        protocol=protocol.Protocol.from_parameters(p),
    )


@dataclass
class Results:
    """Every ``pipeline.run_template`` result, by (template, training seed), read per stage."""

    runs: dict[tuple[str, int], pipeline.TemplateRun]
    templates: list[str]
    protocol: protocol.Protocol

    @property
    def t0(self) -> str:
        return self.templates[0]

    @property
    def s0(self) -> int:
        """The first training seed (the runs come in ``pipeline.plan``'s order)."""
        return next(iter(self.runs))[1]

    @property
    def first(self) -> pipeline.TemplateRun:
        """The first template on the first training seed (the sweeps, the transfer probe and the figure)."""
        return self.runs[(self.t0, self.s0)]

    def main_label(self, template: str) -> str:
        """The label of ``template``'s main stage-2 run (the main claim's: its first batch size)."""
        return self.protocol.main_label(template)

    def untrained(self) -> dict[str, evaluate.TaskPredictions | None]:
        return {t: self.runs[(t, self.s0)].untrained for t in self.templates}

    def stage1_runs(self) -> dict[str, dict[int, pipeline.StageRun]]:
        return {t: {s: r.stage1 for (tt, s), r in self.runs.items() if tt == t} for t in self.templates}

    def stage2_runs(self) -> dict[str, dict[int, pipeline.StageRun]]:
        """Each template's main stage-2 run per training seed."""
        return {
            t: {s: r.stage2[self.main_label(t)] for (tt, s), r in self.runs.items() if tt == t} for t in self.templates
        }

    def all_runs(self) -> dict[str, pipeline.StageRun]:
        """Every stage run by a readable label ("sth seed 0 stage 2, batch 32")."""
        out = {f"{t} seed {s} stage 1": r.stage1 for (t, s), r in self.runs.items()}
        out |= {f"{t} seed {s} stage 2, {label}": x for (t, s), r in self.runs.items() for label, x in r.stage2.items()}
        return out


def histories(runs: Mapping[tuple[str, int], pipeline.TemplateRun]) -> dict[str, list[dict]]:
    """The history rows ``stsnb.training.train.fit`` wrote (loss and dev score by step) of every run of the first
    template on the first training seed, by a label naming the stage ("stage 1 (Eq. 8)", "stage 2, batch 32"), for
    ``stsnb.teaching.training_curves``. Each stage is its own fit: stage 2's steps count from 0 again, from stage 1's
    kept adapter."""
    if not runs:
        raise ValueError("no run to read histories from")
    first = runs[next(iter(runs))]  # the runs come in pipeline.plan's order: the first template, first seed
    out = {"stage 1 (Eq. 8)": list(first.stage1.result.history)}
    out |= {f"stage 2, {label}": list(stage.result.history) for label, stage in first.stage2.items()}
    return out


def _steps(n: int) -> str:
    return f"{n} step" if n == 1 else f"{n} steps"


def data_behind(inputs: Inputs, results: Results) -> str:
    """This run's training data and steps beside the paper's, for the notebook's reading of its levels: the NLI
    triplets and stage-2 pairs per training seed with the optimizer steps the first seed's main runs took, and the
    test pairs scored (the paper: SimCSE's 275,602 triplets, 10,249 pairs over 8-10 epochs, every test pair)."""
    first, s0 = results.first, results.s0
    stage1_steps = first.stage1.result.steps
    stage2_steps = first.stage2[results.main_label(results.t0)].result.steps
    return (
        f"{len(inputs.triplets[s0])} NLI triplets ({_steps(stage1_steps)} of stage 1) and "
        f"{len(inputs.stage2_pairs(s0))} STS-B + SICK-R pairs ({_steps(stage2_steps)} of stage 2) per training seed, "
        f"scored on {inputs.scoring.scope()}; the paper: 275,602 triplets, 10,249 pairs over 8-10 epochs, every "
        "test pair"
    )


def beside_the_paper(results: Results, paper_row: str, backbone: str, note: str) -> list[dict]:
    """Each template's stage 1 and stage 2 (means over the training seeds) beside Table 4's averages, and PromptSTH's
    per task beside Table 2's PromptSTH and Pcc-tuning rows. ``note`` is completed with the number of seeds."""
    rows: list[dict] = []
    stage1, stage2 = results.stage1_runs(), results.stage2_runs()
    for template in results.templates:
        name = TEMPLATE_NAMES[template]
        setting = f"{paper_row} {name}"
        here = f"{note}, mean of {len(stage1[template])} training seed(s)"
        means = {
            "stage 1": pipeline.mean_scores(list(stage1[template].values())),
            "stage 2": pipeline.mean_scores(list(stage2[template].values())),
        }
        for stage, scores in means.items():
            ours, theirs = f"{backbone} {name} {stage}", f"{setting} {stage}"
            rows += REPORTED.compare({"avg": scores["avg"]}, "Table 4", theirs, our_setting=ours, note=here)
        if template == "sth":
            for stage, row in (("stage 1", "PromptSTH"), ("stage 2", "Pcc-tuning")):
                rows += REPORTED.compare(
                    means[stage], "Table 2", f"{paper_row} {row}", our_setting=f"{backbone} {stage}", note=here
                )
    return rows


def stage_claims(results: Results, paper_row: str, *, n_resamples: int, seed: int) -> list[dict]:
    """``claims.stage_claims`` of every template (stage 1 vs untrained, stage 2 vs stage 1), each claim's text
    prefixed with the template's name; the row of the paper's main claim (``main_claim``: True, ``claims.MAIN_CLAIMS``)
    is the first template's stage 2 vs stage 1 (Table 4's main template, PromptSTH, in every profile)."""
    rows = []
    untrained, stage1, stage2 = results.untrained(), results.stage1_runs(), results.stage2_runs()
    for template in results.templates:
        name = TEMPLATE_NAMES[template]
        for row in claims.stage_claims(
            untrained[template],
            stage1[template],
            stage2[template],
            paper_row,
            name,
            n_resamples=n_resamples,
            seed=seed,
            main_claim=template == results.t0,
        ):
            row["claim"] = f"{name}: {row['claim']}"
            rows.append(row)
    return rows


def levels(results: Results, paper_row: str) -> str:
    """Our first template's average after stage 1 and after stage 2 (means over the training seeds) beside Table 4's
    for the same template, and the optimizer steps stage 2 took with the steps dev selection kept, e.g. "PromptSTH
    64.09 -> 69.07 (mean of 3 seeds; the paper's Mistral-7b PromptSTH, Table 4: 85.66 -> 90.61), stage 2 in 4
    optimizer steps per seed (dev selection kept step 2-4)"."""
    t0 = results.t0
    name = TEMPLATE_NAMES[t0]
    stage1, stage2 = results.stage1_runs()[t0], results.stage2_runs()[t0]
    ours = [pipeline.mean_scores(list(runs.values()))["avg"] for runs in (stage1, stage2)]
    paper = claims.stage2_gain(paper_row, name)
    steps = sorted({r.result.steps for r in stage2.values()})
    kept = sorted(r.kept_step for r in stage2.values())
    took = str(steps[0]) if len(steps) == 1 else f"{steps[0]}-{steps[-1]}"
    chose = str(kept[0]) if kept[0] == kept[-1] else f"{kept[0]}-{kept[-1]}"
    return (
        f"{name} {ours[0]:.2f} -> {ours[1]:.2f} (mean of {len(stage2)} training seed(s); the paper's {paper_row} "
        f"{name}, Table 4: {paper[0]:.2f} -> {paper[1]:.2f}), stage 2 in {took} optimizer steps per seed (dev "
        f"selection kept step {chose})"
    )


def takeaway(rows: Sequence[Mapping], results: Results, paper_row: str, backbone: str, cpu: str) -> str:
    """The run's takeaway: it opens with the paper's main claim and its verdict (``main_claim_text``, whatever it
    is), then our levels beside the paper's (:func:`levels`), the main claim's seeds-and-pairs interval, the committed
    cpu run's result (``cpu``), how much of the gain the control recovers and what it attributes the gain to."""
    main_claim = claims.MAIN_CLAIMS[0]
    main = main_claim.row_in(rows)
    text = f"The paper's main claim: {main_claims.main_claim_text(main_claim, rows)}."
    if main is None:
        return text
    control = next((r for r in rows if r.get("control")), None)
    both = main.get("seeds_and_pairs")
    both_text = f"; seeds and pairs [{both['low']:+.2f}, {both['high']:+.2f}]" if both else ""
    recovered = claims.control_recovers(main, control)
    steps = sorted({r.result.steps for r in results.stage2_runs()[results.t0].values()})
    took = "-".join(str(n) for n in dict.fromkeys([steps[0], steps[-1]]))
    return (
        f"{text} On {backbone}: {levels(results, paper_row)}; stage 2 minus stage 1 {main['difference']:+.2f} after "
        f"{took} optimizer steps of stage 2, beside the paper's {main['paper_difference']:+.2f} after its full stage 2 "
        f"on {paper_row}: gains of a like size from trainings of unlike size, not a reproduction of the paper's "
        f"level{both_text} ({cpu}). "
        f"{recovered[:1].upper()}{recovered[1:]}; {claims.attribution(main, control)}."
    )


def above_ceilings(crossings: Mapping[str, Mapping[str, bool]]) -> dict[str, list[str]]:
    """Ceiling label -> the tasks above it (from ``claims.ceiling_crossings``)."""
    return {name: [t for t, c in crossings.items() if c[name]] for name in LIMITS}
