/* commbench's MPI call logger for the nonblocking and neighborhood collectives
 * (not OSU's code): preloaded into the unmodified OMB binaries, it writes the
 * listed MPI calls with their counts to /tmp/osutrace/out.<rank>. */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
static FILE *f;
static int tests;
static void open_f(void){ if(!f){int r; PMPI_Comm_rank(MPI_COMM_WORLD,&r); char n[64]; snprintf(n,64,"/tmp/osutrace/out.%d",r); f=fopen(n,"w");}}
static void flush_tests(void){ if(f && tests){ fprintf(f,"Test x%d\n",tests); tests=0; } }
#define LOG(...) do{ flush_tests(); if(f) fprintf(f, __VA_ARGS__);}while(0)
static int tsz(MPI_Datatype t){int s; PMPI_Type_size(t,&s); return s;}
int MPI_Init(int *a, char ***b){int r=PMPI_Init(a,b); open_f(); return r;}
int MPI_Init_thread(int *a, char ***b, int q, int *p){int r=PMPI_Init_thread(a,b,q,p); open_f(); return r;}
int MPI_Send(const void *buf,int c,MPI_Datatype t,int d,int tag,MPI_Comm comm){LOG("Send %d %d tag%d\n",c*tsz(t),d,tag);return PMPI_Send(buf,c,t,d,tag,comm);}
int MPI_Recv(void *buf,int c,MPI_Datatype t,int d,int tag,MPI_Comm comm,MPI_Status *st){LOG("Recv %d %d tag%d\n",c*tsz(t),d,tag);return PMPI_Recv(buf,c,t,d,tag,comm,st);}
int MPI_Wait(MPI_Request*q,MPI_Status*s){LOG("Wait\n");return PMPI_Wait(q,s);}
int MPI_Waitall(int n,MPI_Request*q,MPI_Status*s){LOG("Waitall %d\n",n);return PMPI_Waitall(n,q,s);}
int MPI_Test(MPI_Request*q,int*fl,MPI_Status*s){tests++;return PMPI_Test(q,fl,s);}
int MPI_Barrier(MPI_Comm c){LOG("Barrier\n");return PMPI_Barrier(c);}
double MPI_Wtime(void){LOG("Wtime\n");return PMPI_Wtime();}
int MPI_Reduce(const void*a,void*b,int c,MPI_Datatype t,MPI_Op o,int r,MPI_Comm m){LOG("Reduce %d x%d root%d %s\n",c,tsz(t),r,o==MPI_MAX?"max":o==MPI_MIN?"min":o==MPI_SUM?"sum":"?");return PMPI_Reduce(a,b,c,t,o,r,m);}
int MPI_Allreduce(const void*a,void*b,int c,MPI_Datatype t,MPI_Op o,MPI_Comm m){LOG("Allreduce %d x%d %s\n",c,tsz(t),o==MPI_MAX?"max":o==MPI_MIN?"min":o==MPI_SUM?"sum":"?");return PMPI_Allreduce(a,b,c,t,o,m);}
int MPI_Bcast(void*a,int c,MPI_Datatype t,int r,MPI_Comm m){LOG("Bcast %d\n",c*tsz(t));return PMPI_Bcast(a,c,t,r,m);}
int MPI_Gather(const void*a,int c,MPI_Datatype t,void*b,int c2,MPI_Datatype t2,int r,MPI_Comm m){LOG("Gather %d\n",c*tsz(t));return PMPI_Gather(a,c,t,b,c2,t2,r,m);}
int MPI_Iallgather(const void*a,int c,MPI_Datatype t,void*b,int c2,MPI_Datatype t2,MPI_Comm m,MPI_Request*q){LOG("Iallgather %d %d%s\n",c*tsz(t),c2*tsz(t2),a==MPI_IN_PLACE?" inplace":"");return PMPI_Iallgather(a,c,t,b,c2,t2,m,q);}
int MPI_Iallgatherv(const void*a,int c,MPI_Datatype t,void*b,const int*c2,const int*d,MPI_Datatype t2,MPI_Comm m,MPI_Request*q){LOG("Iallgatherv %d rc0=%d d1=%d\n",c*tsz(t),c2[0],d[1]);return PMPI_Iallgatherv(a,c,t,b,c2,d,t2,m,q);}
int MPI_Iallreduce(const void*a,void*b,int c,MPI_Datatype t,MPI_Op o,MPI_Comm m,MPI_Request*q){LOG("Iallreduce %d x%d %s\n",c,tsz(t),o==MPI_SUM?"sum":"?");return PMPI_Iallreduce(a,b,c,t,o,m,q);}
int MPI_Ialltoall(const void*a,int c,MPI_Datatype t,void*b,int c2,MPI_Datatype t2,MPI_Comm m,MPI_Request*q){LOG("Ialltoall %d %d\n",c*tsz(t),c2*tsz(t2));return PMPI_Ialltoall(a,c,t,b,c2,t2,m,q);}
int MPI_Ialltoallv(const void*a,const int*c,const int*d,MPI_Datatype t,void*b,const int*c2,const int*d2,MPI_Datatype t2,MPI_Comm m,MPI_Request*q){LOG("Ialltoallv sc0=%d sd1=%d rc0=%d rd1=%d x%d\n",c[0],d[1],c2[0],d2[1],tsz(t));return PMPI_Ialltoallv(a,c,d,t,b,c2,d2,t2,m,q);}
int MPI_Ialltoallw(const void*a,const int*c,const int*d,const MPI_Datatype*t,void*b,const int*c2,const int*d2,const MPI_Datatype*t2,MPI_Comm m,MPI_Request*q){LOG("Ialltoallw sc0=%d sd1=%d rc0=%d rd1=%d x%d\n",c[0],d[1],c2[0],d2[1],tsz(t[0]));return PMPI_Ialltoallw(a,c,d,t,b,c2,d2,t2,m,q);}
int MPI_Ibarrier(MPI_Comm m,MPI_Request*q){LOG("Ibarrier\n");return PMPI_Ibarrier(m,q);}
int MPI_Ibcast(void*a,int c,MPI_Datatype t,int r,MPI_Comm m,MPI_Request*q){LOG("Ibcast %d root%d\n",c*tsz(t),r);return PMPI_Ibcast(a,c,t,r,m,q);}
int MPI_Igather(const void*a,int c,MPI_Datatype t,void*b,int c2,MPI_Datatype t2,int r,MPI_Comm m,MPI_Request*q){LOG("Igather %d %d root%d\n",c*tsz(t),c2*tsz(t2),r);return PMPI_Igather(a,c,t,b,c2,t2,r,m,q);}
int MPI_Igatherv(const void*a,int c,MPI_Datatype t,void*b,const int*c2,const int*d,MPI_Datatype t2,int r,MPI_Comm m,MPI_Request*q){int me;PMPI_Comm_rank(m,&me);LOG("Igatherv %d root%d rc0=%d d1=%d\n",c*tsz(t),r,me==r?c2[0]:-1,me==r?d[1]:-1);return PMPI_Igatherv(a,c,t,b,c2,d,t2,r,m,q);}
int MPI_Ireduce(const void*a,void*b,int c,MPI_Datatype t,MPI_Op o,int r,MPI_Comm m,MPI_Request*q){LOG("Ireduce %d x%d root%d\n",c,tsz(t),r);return PMPI_Ireduce(a,b,c,t,o,r,m,q);}
int MPI_Ireduce_scatter(const void*a,void*b,const int*c,MPI_Datatype t,MPI_Op o,MPI_Comm m,MPI_Request*q){LOG("Ireduce_scatter rc0=%d rc1=%d x%d\n",c[0],c[1],tsz(t));return PMPI_Ireduce_scatter(a,b,c,t,o,m,q);}
int MPI_Ireduce_scatter_block(const void*a,void*b,int c,MPI_Datatype t,MPI_Op o,MPI_Comm m,MPI_Request*q){LOG("Ireduce_scatter_block %d x%d\n",c,tsz(t));return PMPI_Ireduce_scatter_block(a,b,c,t,o,m,q);}
int MPI_Iscatter(const void*a,int c,MPI_Datatype t,void*b,int c2,MPI_Datatype t2,int r,MPI_Comm m,MPI_Request*q){LOG("Iscatter %d %d root%d\n",c*tsz(t),c2*tsz(t2),r);return PMPI_Iscatter(a,c,t,b,c2,t2,r,m,q);}
int MPI_Iscatterv(const void*a,const int*c,const int*d,MPI_Datatype t,void*b,int c2,MPI_Datatype t2,int r,MPI_Comm m,MPI_Request*q){int me;PMPI_Comm_rank(m,&me);LOG("Iscatterv %d root%d sc0=%d d1=%d\n",c2*tsz(t2),r,me==r?c[0]:-1,me==r?d[1]:-1);return PMPI_Iscatterv(a,c,d,t,b,c2,t2,r,m,q);}
int MPI_Neighbor_allgather(const void*a,int c,MPI_Datatype t,void*b,int c2,MPI_Datatype t2,MPI_Comm m){LOG("Neighbor_allgather %d %d\n",c*tsz(t),c2*tsz(t2));return PMPI_Neighbor_allgather(a,c,t,b,c2,t2,m);}
int MPI_Ineighbor_allgather(const void*a,int c,MPI_Datatype t,void*b,int c2,MPI_Datatype t2,MPI_Comm m,MPI_Request*q){LOG("Ineighbor_allgather %d %d\n",c*tsz(t),c2*tsz(t2));return PMPI_Ineighbor_allgather(a,c,t,b,c2,t2,m,q);}
int MPI_Neighbor_allgatherv(const void*a,int c,MPI_Datatype t,void*b,const int*c2,const int*d,MPI_Datatype t2,MPI_Comm m){LOG("Neighbor_allgatherv %d rc0=%d d1=%d\n",c*tsz(t),c2[0],d[1]);return PMPI_Neighbor_allgatherv(a,c,t,b,c2,d,t2,m);}
int MPI_Ineighbor_allgatherv(const void*a,int c,MPI_Datatype t,void*b,const int*c2,const int*d,MPI_Datatype t2,MPI_Comm m,MPI_Request*q){LOG("Ineighbor_allgatherv %d rc0=%d d1=%d\n",c*tsz(t),c2[0],d[1]);return PMPI_Ineighbor_allgatherv(a,c,t,b,c2,d,t2,m,q);}
int MPI_Neighbor_alltoall(const void*a,int c,MPI_Datatype t,void*b,int c2,MPI_Datatype t2,MPI_Comm m){LOG("Neighbor_alltoall %d %d\n",c*tsz(t),c2*tsz(t2));return PMPI_Neighbor_alltoall(a,c,t,b,c2,t2,m);}
int MPI_Ineighbor_alltoall(const void*a,int c,MPI_Datatype t,void*b,int c2,MPI_Datatype t2,MPI_Comm m,MPI_Request*q){LOG("Ineighbor_alltoall %d %d\n",c*tsz(t),c2*tsz(t2));return PMPI_Ineighbor_alltoall(a,c,t,b,c2,t2,m,q);}
int MPI_Neighbor_alltoallv(const void*a,const int*c,const int*d,MPI_Datatype t,void*b,const int*c2,const int*d2,MPI_Datatype t2,MPI_Comm m){LOG("Neighbor_alltoallv sc0=%d sd1=%d rc0=%d rd1=%d\n",c[0],d[1],c2[0],d2[1]);return PMPI_Neighbor_alltoallv(a,c,d,t,b,c2,d2,t2,m);}
int MPI_Ineighbor_alltoallv(const void*a,const int*c,const int*d,MPI_Datatype t,void*b,const int*c2,const int*d2,MPI_Datatype t2,MPI_Comm m,MPI_Request*q){LOG("Ineighbor_alltoallv sc0=%d sd1=%d rc0=%d rd1=%d\n",c[0],d[1],c2[0],d2[1]);return PMPI_Ineighbor_alltoallv(a,c,d,t,b,c2,d2,t2,m,q);}
int MPI_Neighbor_alltoallw(const void*a,const int*c,const MPI_Aint*d,const MPI_Datatype*t,void*b,const int*c2,const MPI_Aint*d2,const MPI_Datatype*t2,MPI_Comm m){LOG("Neighbor_alltoallw sc0=%d sd1=%ld rc0=%d rd1=%ld x%d\n",c[0],(long)d[1],c2[0],(long)d2[1],tsz(t[0]));return PMPI_Neighbor_alltoallw(a,c,d,t,b,c2,d2,t2,m);}
int MPI_Ineighbor_alltoallw(const void*a,const int*c,const MPI_Aint*d,const MPI_Datatype*t,void*b,const int*c2,const MPI_Aint*d2,const MPI_Datatype*t2,MPI_Comm m,MPI_Request*q){LOG("Ineighbor_alltoallw sc0=%d sd1=%ld rc0=%d rd1=%ld x%d\n",c[0],(long)d[1],c2[0],(long)d2[1],tsz(t[0]));return PMPI_Ineighbor_alltoallw(a,c,d,t,b,c2,d2,t2,m,q);}
int MPI_Dims_create(int n,int d,int*dims){int r=PMPI_Dims_create(n,d,dims);LOG("Dims_create %d %d ->",n,d);for(int i=0;i<d;i++)LOG(" %d",dims[i]);LOG("\n");return r;}
int MPI_Cart_create(MPI_Comm o,int d,const int*dims,const int*per,int re,MPI_Comm*c){LOG("Cart_create ndims=%d",d);for(int i=0;i<d;i++)LOG(" %d(p%d)",dims[i],per[i]);LOG(" reorder=%d\n",re);return PMPI_Cart_create(o,d,dims,per,re,c);}
int MPI_Dist_graph_create_adjacent(MPI_Comm o,int ni,const int*s,const int*sw,int no,const int*dd,const int*dw,MPI_Info inf,int re,MPI_Comm*c){LOG("Dist_graph_create_adjacent in=%d:",ni);for(int i=0;i<ni;i++)LOG(" %d",s[i]);LOG(" out=%d:",no);for(int i=0;i<no;i++)LOG(" %d",dd[i]);LOG(" weighted=%d reorder=%d\n",sw!=MPI_UNWEIGHTED,re);return PMPI_Dist_graph_create_adjacent(o,ni,s,sw,no,dd,dw,inf,re,c);}
int MPI_Dist_graph_create(MPI_Comm o,int n,const int*s,const int*deg,const int*dd,const int*w,MPI_Info inf,int re,MPI_Comm*c){LOG("Dist_graph_create n=%d\n",n);return PMPI_Dist_graph_create(o,n,s,deg,dd,w,inf,re,c);}
int MPI_Cart_shift(MPI_Comm c,int d,int disp,int*s,int*dst){int r=PMPI_Cart_shift(c,d,disp,s,dst);LOG("Cart_shift dim%d disp%d -> %d %d\n",d,disp,*s,*dst);return r;}
int MPI_Finalize(void){flush_tests();if(f)fclose(f);f=0;return PMPI_Finalize();}
