#!/usr/bin/env python3
"""Issue 30 (session 8, shorttill2): how far a single talhão's window separates conventional from
no-till in the short world, on the TUNING seeds only. Input: the CSV of
  go test -tags research -run TestShortFeatures ./tillage/ -shortfeatures f.csv -shortn 300
Usage: scripts/tillage-short-ceiling.py f.csv
Every rule's threshold is chosen on one tuning seed at the detector's false-positive rate there and
scored on the other seed (1->2, 2->1): no figure is chosen on the talhoes it is scored on."""
import csv, math, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r['skip'] == 'false']
FEATS = ['r', 'rfirst', 'rlast', 'rmin3', 'zstep', 'zguard', 'cell15', 'cell25', 'slope', 'wet', 'vnir', 'swv', 'zL', 'zQ', 'joint', 'zLmax', 'jointraw']
HIGH = {'plain', 'zstep', 'zguard', 'cell15', 'cell25', 'swv', 'zL', 'zQ', 'joint', 'zLmax', 'jointraw'}  # larger = more tilled; others: smaller = more tilled
def val(r, k):
    try: x = float(r[k])
    except ValueError: x = float('nan')
    return x
def score(r, k):  # oriented so that larger = more tilled; NaN -> -inf
    x = val(r, k)
    if x != x: return -math.inf
    return x if k in HIGH else -x
def seed(s): return [r for r in rows if r['seed'] == s]
def pr(rs, flag):
    P = [r for r in rs if r['pos'] == 'true']; N = [r for r in rs if r['pos'] == 'false']
    tp = sum(1 for r in P if flag(r)); fp = sum(1 for r in N if flag(r))
    return (tp / len(P) + 1 - fp / len(N)) / 2, tp / len(P), fp / len(N)
det = lambda r: int(r['det']) > 0
nolr = lambda r: int(r['det']) > 0 and r['tests'] != 'low-residue'
def auc(k):
    P = [score(r, k) for r in rows if r['pos'] == 'true']; N = [score(r, k) for r in rows if r['pos'] == 'false']
    s = sum(1 if a > b else 0.5 if a == b else 0 for a in P for b in N)
    return s / len(P) / len(N)
def thresh_at(rs, sc, fpr):
    """lowest threshold t (flag sc >= t) whose false-positive rate on rs does not exceed fpr"""
    N = sorted((sc(r) for r in rs if r['pos'] == 'false'), reverse=True)
    k = int(math.floor(fpr * len(N) + 1e-9))
    return N[k] + 1e-12 if k < len(N) else -math.inf
print('talhoes scored (pos / neg):', sum(r['pos'] == 'true' for r in rows), sum(r['pos'] == 'false' for r in rows))
for s in '12':
    b, tpr, fpr = pr(seed(s), det)
    t = thresh_at(seed(s), lambda r: val(r, 'plain'), fpr)
    pb = pr(seed(s), lambda r: val(r, 'plain') >= t)
    print(f'seed {s}: Detect {b:.3f} (recall {tpr:.3f}, FPR {fpr:.3f}); plain rule at equal FP {pb[0]:.3f}')
print('\nAUC (both seeds pooled):')
print('  plain %.3f' % auc('plain'), ' '.join(f'{k} {auc(k):.3f}' for k in FEATS))
print('\nDetect without its low-residue-only talhoes, OR feature beyond a threshold chosen on the other seed at Detect\'s FPR:')
for k in FEATS:
    out = []
    for a, b in (('1', '2'), ('2', '1')):
        _, _, fpr = pr(seed(a), det)
        # threshold on the feature alone, over the talhoes nolr leaves unflagged, so that nolr OR rule matches fpr
        rest = [r for r in seed(a) if not nolr(r)]
        nN = sum(r['pos'] == 'false' for r in seed(a)); base_fp = sum(1 for r in seed(a) if r['pos'] == 'false' and nolr(r))
        Ns = sorted((score(r, k) for r in rest if r['pos'] == 'false'), reverse=True)
        kk = max(0, int(math.floor(fpr * nN + 1e-9)) - base_fp)
        t = Ns[kk] + 1e-12 if kk < len(Ns) else -math.inf
        out.append(pr(seed(b), lambda r: nolr(r) or score(r, k) >= t))
    print(f'  {k:7s} 1->2 {out[0][0]:.3f} (FPR {out[0][2]:.3f})   2->1 {out[1][0]:.3f} (FPR {out[1][2]:.3f})')
def logistic(train, feats):
    X = [[max(-8, min(8, score(r, k))) if score(r, k) > -math.inf else 0 for k in feats] for r in train]
    m = [sum(x[j] for x in X) / len(X) for j in range(len(feats))]
    sd = [math.sqrt(sum((x[j] - m[j]) ** 2 for x in X) / len(X)) or 1 for j in range(len(feats))]
    Z = [[(x[j] - m[j]) / sd[j] for j in range(len(feats))] for x in X]
    Y = [1 if r['pos'] == 'true' else 0 for r in train]
    w = [0.0] * (len(feats) + 1)
    for _ in range(400):
        g = [0.0] * len(w)
        for z, y in zip(Z, Y):
            e = 1 / (1 + math.exp(-(w[0] + sum(wj * zj for wj, zj in zip(w[1:], z))))) - y
            g[0] += e
            for j in range(len(feats)): g[j + 1] += e * z[j]
        w = [wi - 0.5 * gi / len(Z) for wi, gi in zip(w, g)]
    def f(r):
        x = [max(-8, min(8, score(r, k))) if score(r, k) > -math.inf else 0 for k in feats]
        return w[0] + sum(w[j + 1] * (x[j] - m[j]) / sd[j] for j in range(len(feats)))
    return f
print('\nLogistic regression on features, threshold at Detect\'s FPR on the training seed, scored on the other:')
for feats in (['r', 'zguard'], ['rlast', 'zguard', 'cell15'], ['r', 'rfirst', 'rlast', 'rmin3', 'zstep', 'zguard', 'cell15', 'cell25', 'slope'], [k for k in FEATS if k not in ('vnir', 'swv')], FEATS):
    out = []
    for a, b in (('1', '2'), ('2', '1')):
        f = logistic(seed(a), feats)
        _, _, fpr = pr(seed(a), det)
        t = thresh_at(seed(a), f, fpr)
        out.append(pr(seed(b), lambda r: f(r) >= t))
    print(f'  {"+".join(feats)}: 1->2 {out[0][0]:.3f} (FPR {out[0][2]:.3f})   2->1 {out[1][0]:.3f} (FPR {out[1][2]:.3f})')
