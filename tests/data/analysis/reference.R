# Reference fits for tests/test_analysis_models.py, as statsmodels' lme_results.R does for its own tests:
# lme4::lmer (REML, two outcomes: one with a cluster variance, one with none), geepack::geeglm (binomial, exchangeable, robust "san.se") and survival::clogit fitted to
# study_games.csv beside this file, written to r_results.json (or to the path given as the first argument).
#
#   Rscript tests/data/analysis/reference.R [out.json]
#
# Treatment coding with the reference levels bargain.analysis.models uses: arm "base", the first condition,
# role and game in sorted order; R's column order (main effects in formula order, then the interaction).

suppressPackageStartupMessages({
  library(lme4)
  library(geepack)
  library(survival)
  library(jsonlite)
})

file_arg <- grep("^--file=", commandArgs(trailingOnly = FALSE), value = TRUE)
here <- dirname(normalizePath(sub("^--file=", "", file_arg)))
args <- commandArgs(trailingOnly = TRUE)
out <- if (length(args) > 0) args[[1]] else file.path(here, "r_results.json")

d <- read.csv(file.path(here, "study_games.csv"), stringsAsFactors = FALSE)
d <- d[order(d$cluster, d$game_index), ]  # geeglm wants each cluster's rows together
d$arm <- relevel(factor(d$arm), ref = "base")
d$condition <- factor(d$condition)
d$human_role <- factor(d$human_role)
d$game_index <- factor(d$game_index)
d$cluster <- factor(d$cluster)

mean_structure <- ~ arm * condition + human_role + game_index

# emmeans' reference grid: every (arm, condition) cell averaged with equal weights over the levels of human_role
# and game_index (emmeans itself is not needed for so small a computation)
grid <- expand.grid(arm = levels(d$arm), condition = levels(d$condition), human_role = levels(d$human_role),
                    game_index = levels(d$game_index))
grid_x <- model.matrix(mean_structure, grid)
cells <- unique(grid[, c("arm", "condition")])

fit_lmer <- function(outcome) {
  m <- suppressMessages(lmer(update(mean_structure, paste(outcome, "~ . + (1 | cluster)")), data = d, REML = TRUE,
            control = lmerControl(optimizer = "bobyqa", optCtrl = list(rhobeg = 2e-4, rhoend = 2e-12, maxfun = 1e5))))
  vc <- as.data.frame(VarCorr(m))
  v <- as.matrix(vcov(m))
  emm <- lapply(seq_len(nrow(cells)), function(i) {
    l <- colMeans(grid_x[grid$arm == cells$arm[i] & grid$condition == cells$condition[i], , drop = FALSE])
    list(arm = as.character(cells$arm[i]), condition = as.character(cells$condition[i]),
         estimate = sum(l * fixef(m)), se = sqrt(drop(t(l) %*% v %*% l)))
  })
  list(terms = names(fixef(m)), coef = unname(fixef(m)), se = unname(sqrt(diag(v))), vcov = unname(v),
       cluster_variance = vc$vcov[vc$grp == "cluster"], residual_variance = vc$vcov[vc$grp == "Residual"],
       reml_loglik = as.numeric(logLik(m)), singular = isSingular(m), emm = emm)
}

m2 <- geeglm(deal ~ arm * condition + human_role + game_index, id = cluster, data = d, family = binomial,
             corstr = "exchangeable", std.err = "san.se", control = geese.control(epsilon = 1e-12, maxit = 200))
s2 <- summary(m2)

m3 <- clogit(deal ~ arm + game_index + strata(cluster), data = d, method = "exact",
             control = coxph.control(eps = 1e-10, iter.max = 100))

results <- list(
  versions = list(R = as.character(getRversion()), lme4 = as.character(packageVersion("lme4")),
                  geepack = as.character(packageVersion("geepack")),
                  survival = as.character(packageVersion("survival"))),
  lmer = list(person_norm_utility = fit_lmer("person_norm_utility"),
              agent_norm_utility = fit_lmer("agent_norm_utility")),  # its cluster variance is 0: a singular fit
  geeglm = list(terms = names(coef(m2)), coef = unname(coef(m2)), se = unname(s2$coefficients[, "Std.err"]),
                alpha = unname(s2$corr$Estimate), scale = unname(s2$dispersion$Estimate)),
  clogit = list(terms = names(coef(m3)), coef = unname(coef(m3)), se = unname(sqrt(diag(vcov(m3)))))
)
write_json(results, out, auto_unbox = TRUE, digits = NA, pretty = TRUE)
