"""ECE^KDE written directly in PyTorch, as a user would: the n x n log-kernel matrix, a softmax over each
row (log-sum-exp) and autograd for the gradient. The oracle of the op's Python test and its competitor in
bench/torch. Same conventions as the library: the kernel of centre i read at x_j is the Dirichlet
density with alpha_i = x_i / h + 1, the centre itself is left out, and the rest of a one-dimensional
problem is the sum of the other columns."""
import torch
import torch.nn.functional as F


def leave_one_out_ratios(x, labels, classes, h):
    """r[j, c] = sum_{i != j} k_h(x_j; x_i) [y_i = c] / sum_{i != j} k_h(x_j; x_i) for points x (n x d)."""
    alpha = x / h + 1
    log_norm = torch.lgamma(alpha.sum(1)) - torch.lgamma(alpha).sum(1)  # per centre i
    log_x = x.clamp_min(torch.finfo(x.dtype).tiny).log()
    scores = log_norm[None, :] + log_x @ (x / h).T  # scores[j, i] = log k_h(x_j; x_i)
    eye = torch.eye(x.shape[0], dtype=torch.bool, device=x.device)
    weights = torch.softmax(scores.masked_fill(eye, float("-inf")), dim=1)
    return weights @ F.one_hot(labels, classes).to(x.dtype)


def one_dimensional_error(s, rest, positive, h, p):
    """mean_j |r_j - s_j|^p of the Beta-kernel problem x_j = (s_j, rest_j) with 0/1 labels."""
    r = leave_one_out_ratios(torch.stack([s, rest], 1), positive.long(), 2, h)[:, 1]
    return (r - s).abs().pow(p).mean()


def calibration_error(probs, labels, type="canonical", p=1.0, h=0.1):
    """CE_p^p of `type` for probs (n x K, or n x 1 / n for binary) and integer labels, bandwidth h."""
    if type == "canonical":
        r = leave_one_out_ratios(probs, labels, probs.shape[1], h)
        return (r - probs).abs().pow(p).sum(1).mean()
    if type == "binary":
        probs = probs.reshape(probs.shape[0], -1)
        s = probs[:, -1]
        rest = 1 - s if probs.shape[1] == 1 else probs[:, 0]
        return 2 * one_dimensional_error(s, rest, labels, h, p)
    if type == "top-label":
        s, top = probs.max(1)
        return one_dimensional_error(s, probs.sum(1) - s, labels == top, h, p)
    if type == "marginal":
        total = probs.sum(1)
        return sum(one_dimensional_error(probs[:, c], total - probs[:, c], labels == c, h, p)
                   for c in range(probs.shape[1]))
    raise ValueError(f"unknown type {type}")
